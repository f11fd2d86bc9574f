//! Spin's `fermyon:spin/key-value@2.0.0` in the test host: the `default` store, in memory and
//! shared by one app replica's instances, as `spin up` keeps one store file per app.

pub use crate::component::Kv;
use crate::component::State;
use wasmtime::component::Resource;

pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        world: "spin-variables",
        path: "wit",
        with: { "fermyon:spin/key-value.store": super::OpenStore },
    });
}

use bindings::fermyon::spin::key_value::{Error, Host, HostStore};

/// An open handle: the store is the instance's `kv`.
pub struct OpenStore;

fn store(state: &State) -> Result<&Kv, Error> {
    state.kv.as_ref().ok_or(Error::NoSuchStore)
}

impl Host for State {}

impl HostStore for State {
    fn open(&mut self, label: String) -> Result<Resource<OpenStore>, Error> {
        if label != "default" || self.kv.is_none() {
            return Err(Error::NoSuchStore);
        }
        self.table.push(OpenStore).map_err(|e| Error::Other(e.to_string()))
    }

    fn get(&mut self, _: Resource<OpenStore>, key: String) -> Result<Option<Vec<u8>>, Error> {
        Ok(store(self)?.lock().unwrap().get(&key).cloned())
    }

    fn set(&mut self, _: Resource<OpenStore>, key: String, value: Vec<u8>) -> Result<(), Error> {
        store(self)?.lock().unwrap().insert(key, value);
        Ok(())
    }

    fn delete(&mut self, _: Resource<OpenStore>, key: String) -> Result<(), Error> {
        store(self)?.lock().unwrap().remove(&key);
        Ok(())
    }

    fn exists(&mut self, _: Resource<OpenStore>, key: String) -> Result<bool, Error> {
        Ok(store(self)?.lock().unwrap().contains_key(&key))
    }

    fn get_keys(&mut self, _: Resource<OpenStore>) -> Result<Vec<String>, Error> {
        Ok(store(self)?.lock().unwrap().keys().cloned().collect())
    }

    fn drop(&mut self, handle: Resource<OpenStore>) -> wasmtime::Result<()> {
        self.table.delete(handle)?;
        Ok(())
    }
}
