//! A wasmtime 48 host for traffic-cop, the same host stack Spin embeds: the built lease
//! component called export by export ([`component`]), the Spin app's components composed with
//! it and driven through their triggers' exports ([`apps`]), outbound HTTP with the
//! test CA trusted and requests counted ([`outbound`]), and the stories that drive many
//! instances under faults ([`soak`]) and real `spin up` replicas under chaos ([`chaos`]).

pub mod apps;
mod apps_kv;
pub mod chaos;
pub mod compiled;
pub mod component;
mod component_calls;
pub mod old_build;
pub mod outbound;
pub mod soak;
pub mod staged;

pub use wasmtime;
