//! Spin's `fermyon:spin/key-value@2.0.0` and the standard `wasi:keyvalue/store@0.2.0-draft2` in
//! the test host: the `default` store, in memory and shared by one app replica's instances, as
//! `spin up` keeps one store file per replica (both interfaces reach the same store there too).

pub use crate::component::Kv;
use crate::component::State;
use std::collections::BTreeMap;
use wasmtime::component::Resource;

pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        world: "spin-variables",
        path: "wit",
        with: {
            "fermyon:spin/key-value.store": super::OpenStore,
            "wasi:keyvalue/store.bucket": super::OpenStore,
        },
    });
}

/// An open handle: the store is the instance's `kv`.
pub struct OpenStore;

/// `op` on the instance's store; none when it has no store.
fn with_store<T>(state: &State, op: impl FnOnce(&mut BTreeMap<String, Vec<u8>>) -> T) -> Option<T> {
    state.kv.as_ref().map(|kv| op(&mut kv.lock().unwrap()))
}

/// Opens `label`, the only store there is being `default`.
fn open(state: &mut State, label: &str) -> Option<Resource<OpenStore>> {
    (label == "default" && state.kv.is_some()).then(|| state.table.push(OpenStore).ok()).flatten()
}

mod spin {
    use super::bindings::fermyon::spin::key_value::{Error, Host, HostStore};
    use super::{open, with_store, OpenStore, State};
    use wasmtime::component::Resource;

    impl Host for State {}

    impl HostStore for State {
        fn open(&mut self, label: String) -> Result<Resource<OpenStore>, Error> {
            open(self, &label).ok_or(Error::NoSuchStore)
        }

        fn get(&mut self, _: Resource<OpenStore>, key: String) -> Result<Option<Vec<u8>>, Error> {
            with_store(self, |s| s.get(&key).cloned()).ok_or(Error::NoSuchStore)
        }

        fn set(
            &mut self,
            _: Resource<OpenStore>,
            key: String,
            value: Vec<u8>,
        ) -> Result<(), Error> {
            with_store(self, |s| drop(s.insert(key, value))).ok_or(Error::NoSuchStore)
        }

        fn delete(&mut self, _: Resource<OpenStore>, key: String) -> Result<(), Error> {
            with_store(self, |s| drop(s.remove(&key))).ok_or(Error::NoSuchStore)
        }

        fn exists(&mut self, _: Resource<OpenStore>, key: String) -> Result<bool, Error> {
            with_store(self, |s| s.contains_key(&key)).ok_or(Error::NoSuchStore)
        }

        fn get_keys(&mut self, _: Resource<OpenStore>) -> Result<Vec<String>, Error> {
            with_store(self, |s| s.keys().cloned().collect()).ok_or(Error::NoSuchStore)
        }

        fn drop(&mut self, handle: Resource<OpenStore>) -> wasmtime::Result<()> {
            self.table.delete(handle)?;
            Ok(())
        }
    }
}

/// The standard interface: Spin's over the same store.
mod wasi {
    use super::bindings::fermyon::spin::key_value::{Error as SpinError, HostStore};
    use super::bindings::wasi::keyvalue::store::{Error, Host, HostBucket, KeyResponse};
    use super::{OpenStore, State};
    use wasmtime::component::Resource;

    fn standard(error: SpinError) -> Error {
        match error {
            SpinError::AccessDenied => Error::AccessDenied,
            SpinError::NoSuchStore | SpinError::StoreTableFull => Error::NoSuchStore,
            SpinError::Other(message) => Error::Other(message),
        }
    }

    impl Host for State {
        fn open(&mut self, identifier: String) -> Result<Resource<OpenStore>, Error> {
            HostStore::open(self, identifier).map_err(standard)
        }
    }

    impl HostBucket for State {
        fn get(&mut self, at: Resource<OpenStore>, key: String) -> Result<Option<Vec<u8>>, Error> {
            HostStore::get(self, at, key).map_err(standard)
        }

        fn set(
            &mut self,
            at: Resource<OpenStore>,
            key: String,
            value: Vec<u8>,
        ) -> Result<(), Error> {
            HostStore::set(self, at, key, value).map_err(standard)
        }

        fn delete(&mut self, at: Resource<OpenStore>, key: String) -> Result<(), Error> {
            HostStore::delete(self, at, key).map_err(standard)
        }

        fn exists(&mut self, at: Resource<OpenStore>, key: String) -> Result<bool, Error> {
            HostStore::exists(self, at, key).map_err(standard)
        }

        fn list_keys(
            &mut self,
            at: Resource<OpenStore>,
            _: Option<String>,
        ) -> Result<KeyResponse, Error> {
            let keys = HostStore::get_keys(self, at).map_err(standard)?;
            Ok(KeyResponse { keys, cursor: None })
        }

        fn drop(&mut self, handle: Resource<OpenStore>) -> wasmtime::Result<()> {
            HostStore::drop(self, handle)
        }
    }
}
