//! Components compiled once per test run, not once per test: the native code Cranelift makes
//! for a component is kept in `target/wasmtime-compiled/`, named by the component's sha256 and
//! the engine's settings, and later loads map it instead of compiling again. The tests load the
//! same few components (the lease components, the Spin app's components composed with them)
//! dozens of times over, in several processes, so each is compiled once; the tests' engines
//! compile with Winch ([`config`]), the benchmark's with Cranelift.

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use wasmtime::component::Component;
use wasmtime::Engine;

/// Set by a program that measures the compiled code (the benchmark): its engines then compile
/// with Cranelift, as Spin does.
static OPTIMISING: AtomicBool = AtomicBool::new(false);

/// Every engine made from [`config`] after this call compiles with Cranelift. The benchmark
/// calls it first: its figures are for the code Spin runs.
pub fn optimise() {
    OPTIMISING.store(true, Ordering::Relaxed);
}

/// The settings every test engine starts from. The tests compile with wasmtime's baseline
/// compiler (Winch): on a clean machine the wasmtime group compiles about a dozen components,
/// and the test build's unoptimised Cranelift spent about 80 CPU-seconds more on them than
/// Winch does (CONTRIBUTING.md).
pub fn config() -> wasmtime::Config {
    let mut config = wasmtime::Config::new();
    if !OPTIMISING.load(Ordering::Relaxed) {
        config.strategy(wasmtime::Strategy::Winch);
    }
    config
}

/// The component in `wasm`, compiled for `engine` or loaded as compiled before.
pub fn component(engine: &Engine, wasm: &[u8]) -> wasmtime::Result<Component> {
    let kept = kept_path(engine, wasm);
    // Tests starting together ask for the same component: one compiles, the others wait and
    // load what it kept.
    let compiling = {
        static COMPILING: Mutex<BTreeMap<PathBuf, Arc<Mutex<()>>>> = Mutex::new(BTreeMap::new());
        let mut compiling = COMPILING.lock().unwrap_or_else(|e| e.into_inner());
        compiling.entry(kept.clone()).or_default().clone()
    };
    let _compiling = compiling.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: `deserialize_file` trusts its file to be wasmtime's own output for a compatible
    // engine: every file here was written by `serialize` below, under a name that includes the
    // engine's compatibility hash, and renamed into place only once whole. wasmtime still
    // checks its version and settings header and refuses a mismatch, which compiles afresh.
    if let Ok(component) = unsafe { Component::deserialize_file(engine, &kept) } {
        return Ok(component);
    }
    let component = Component::new(engine, wasm)?;
    // A cache that cannot be written costs only time: the next load compiles again.
    if let Ok(compiled) = component.serialize() {
        let _ = keep(&kept, &compiled);
    }
    Ok(component)
}

/// [`component`] for a file.
pub fn component_file(engine: &Engine, wasm: impl AsRef<Path>) -> wasmtime::Result<Component> {
    let wasm = wasm.as_ref();
    let bytes = std::fs::read(wasm)
        .map_err(|e| wasmtime::format_err!("reading {}: {e}", wasm.display()))?;
    component(engine, &bytes)
}

fn kept_path(engine: &Engine, wasm: &[u8]) -> PathBuf {
    let mut settings = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut settings);
    let digest: String = Sha256::digest(wasm).iter().map(|b| format!("{b:02x}")).collect();
    traffic_cop_testbed::repo_root()
        .join("target/wasmtime-compiled")
        .join(format!("{digest}-{:016x}.cwasm", settings.finish()))
}

/// Written beside its place under a name of its own and renamed into it, so a test loading it
/// meanwhile (in this process or another) finds no file or a whole one.
fn keep(path: &Path, compiled: &[u8]) -> std::io::Result<()> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    std::fs::create_dir_all(path.parent().expect("a directory"))?;
    let write = WRITES.fetch_add(1, Ordering::Relaxed);
    let partial = path.with_extension(format!("{}-{write}.partial", std::process::id()));
    std::fs::write(&partial, compiled)?;
    std::fs::rename(&partial, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// The smallest component there is (the preamble alone): no other test loads it, so its
    /// kept file is this test's.
    const EMPTY: &[u8] = b"\0asm\x0d\0\x01\0";

    /// The kept file's identity: a compile writes a new file and renames it into place.
    fn inode(path: &Path) -> u64 {
        std::fs::metadata(path).unwrap().ino()
    }

    #[test]
    fn a_component_is_compiled_once_and_a_damaged_kept_file_is_compiled_again() {
        let engine = Engine::new(&config()).unwrap();
        let kept = kept_path(&engine, EMPTY);
        let _ = std::fs::remove_file(&kept);

        component(&engine, EMPTY).unwrap();
        let first = inode(&kept);
        assert!(std::fs::read(&kept).unwrap().starts_with(b"\x7fELF"), "kept: wasmtime's ELF");
        component(&engine, EMPTY).unwrap();
        assert_eq!(inode(&kept), first, "the second load compiled again");

        std::fs::write(&kept, b"not what wasmtime wrote").unwrap();
        component(&engine, EMPTY).unwrap();
        assert!(std::fs::read(&kept).unwrap().starts_with(b"\x7fELF"), "the damage was kept");

        // An engine that compiles otherwise keeps another file: the benchmark's Cranelift
        // beside the tests' Winch, in the same directory.
        let mut other = config();
        other.strategy(wasmtime::Strategy::Cranelift);
        assert_ne!(kept_path(&Engine::new(&other).unwrap(), EMPTY), kept);
        std::fs::remove_file(&kept).unwrap();
    }
}
