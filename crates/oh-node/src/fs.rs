//! The core `FileSystem` trait over Promise-returning JS callbacks (the rspack `ThreadsafeNodeFS`
//! pattern). Every call goes through `call_async_catch`, so a throwing callback becomes an
//! `FsError` instead of a fatal exception in the extension host.

use std::sync::RwLock;

use async_trait::async_trait;
use napi::bindgen_prelude::{CallbackContext, FnArgs, FromNapiValue, PromiseRaw, Uint8Array};
use napi::sys;
use napi::threadsafe_function::ThreadsafeFunction;
use napi::Status;
use napi_derive::napi;
use oh_files::{DirEntry, FileStat, FileSystem, FsError};
use serde_json::Value;

use crate::dto::{dir_entries_from_js, stat_from_js, Ignored};

type Tsfn<A, R> = ThreadsafeFunction<A, R, A, Status, false>;

/// The filesystem callbacks. Paths are absolute POSIX paths. A callback rejects with a Node error
/// (`code` such as `ENOENT` in the message) or a `vscode.FileSystemError`.
#[napi(object, object_to_js = false)]
pub struct FsCallbacks {
    #[napi(ts_type = "(path: string) => Promise<Uint8Array>")]
    pub read_file: ThreadsafeFunction<String, FsPromise<Uint8Array>, String, Status, false>,
    #[napi(ts_type = "(path: string, data: Uint8Array) => Promise<void>")]
    pub write_file: ThreadsafeFunction<FnArgs<(String, Uint8Array)>, FsPromise<Ignored>, FnArgs<(String, Uint8Array)>, Status, false>,
    /// `type` is `'file' | 'directory' | 'other'` or a `vscode.FileType` number; `mode` (Unix bits,
    /// optional) is also used to tell the type when `type` is missing.
    #[napi(ts_type = "(path: string) => Promise<{ type?: 'file' | 'directory' | 'other' | number, size: number, mtimeMs?: number, mtime?: number, mode?: number }>")]
    pub stat: ThreadsafeFunction<String, FsPromise<Value>, String, Status, false>,
    /// Entries as `{ name, type }` objects or `[name, type]` pairs (what `vscode.workspace.fs.readDirectory` returns).
    #[napi(ts_type = "(path: string) => Promise<Array<{ name: string, type: 'file' | 'directory' | 'other' | number } | [string, number]>>")]
    pub read_directory: ThreadsafeFunction<String, FsPromise<Value>, String, Status, false>,
    /// `mkdir -p`.
    #[napi(ts_type = "(path: string) => Promise<unknown>")]
    pub create_directory: ThreadsafeFunction<String, FsPromise<Ignored>, String, Status, false>,
    /// Remove a file.
    #[napi(ts_type = "(path: string) => Promise<unknown>")]
    pub delete: ThreadsafeFunction<String, FsPromise<Ignored>, String, Status, false>,
    #[napi(ts_type = "(from: string, to: string) => Promise<unknown>")]
    pub rename: ThreadsafeFunction<FnArgs<(String, String)>, FsPromise<Ignored>, FnArgs<(String, String)>, Status, false>,
    /// Optional `chmod`: a `write` that creates a file sets it to 0o664, as the action server
    /// does. Without it (e.g. `vscode.workspace.fs`, which has no modes) new files keep the
    /// filesystem's default mode.
    #[napi(ts_type = "(path: string, mode: number) => Promise<unknown>")]
    pub set_mode: Option<ThreadsafeFunction<FnArgs<(String, u32)>, FsPromise<Ignored>, FnArgs<(String, u32)>, Status, false>>,
}

/// `FileSystem` over [`FsCallbacks`]; [`NodeFs::dispose`] drops the callbacks so Node can exit.
pub struct NodeFs {
    callbacks: RwLock<Option<std::sync::Arc<FsCallbacks>>>,
}

impl NodeFs {
    pub fn new(callbacks: FsCallbacks) -> Self {
        NodeFs { callbacks: RwLock::new(Some(std::sync::Arc::new(callbacks))) }
    }

    pub fn dispose(&self) {
        self.callbacks.write().unwrap_or_else(|p| p.into_inner()).take();
    }

    fn get(&self) -> Result<std::sync::Arc<FsCallbacks>, FsError> {
        self.callbacks
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| FsError::new("EIO", "the executor was stopped"))
    }
}

async fn call<A: 'static + napi::bindgen_prelude::JsValuesTupleIntoVec, R: FromNapiValue + Send + 'static>(
    f: &Tsfn<A, FsPromise<R>>,
    args: A,
) -> Result<R, FsError> {
    let promise = f.call_async_catch(args).await.map_err(fs_error)?;
    promise.0.await.unwrap_or_else(|_| Err(FsError::new("EIO", "the filesystem callback's promise was dropped")))
}

/// A Promise returned by an fs callback. Unlike napi's `Promise<T>`, a rejection keeps the
/// error's `code` and `name` (read on the JS thread), so `vscode.FileSystemError`s and errors
/// with a `code` property map to the right POSIX code whatever their message says.
pub struct FsPromise<T>(tokio::sync::oneshot::Receiver<Result<T, FsError>>);

impl<T: FromNapiValue + Send + 'static> FromNapiValue for FsPromise<T> {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> napi::Result<Self> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let promise = unsafe { PromiseRaw::<T>::from_napi_value(env, value)? };
        let ok = std::rc::Rc::new(std::cell::Cell::new(Some(tx)));
        let err = ok.clone();
        promise
            .then(move |ctx: CallbackContext<T>| {
                if let Some(tx) = ok.replace(None) {
                    let _ = tx.send(Ok(ctx.value));
                }
                Ok(())
            })?
            .catch(move |ctx: CallbackContext<Rejection>| {
                if let Some(tx) = err.replace(None) {
                    let _ = tx.send(Err(ctx.value.0));
                }
                Ok(())
            })?;
        Ok(FsPromise(rx))
    }
}

/// A rejection reason turned into an `FsError` on the JS thread.
struct Rejection(FsError);

unsafe fn string_property(env: sys::napi_env, obj: sys::napi_value, name: &std::ffi::CStr) -> Option<String> {
    let mut out = std::ptr::null_mut();
    if unsafe { sys::napi_get_named_property(env, obj, name.as_ptr(), &mut out) } != sys::Status::napi_ok {
        let mut exc = std::ptr::null_mut();
        unsafe { sys::napi_get_and_clear_last_exception(env, &mut exc) };
        return None;
    }
    let mut t = 0;
    unsafe { sys::napi_typeof(env, out, &mut t) };
    if t != sys::ValueType::napi_string {
        return None;
    }
    unsafe { String::from_napi_value(env, out) }.ok()
}

impl FromNapiValue for Rejection {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> napi::Result<Self> {
        let mut t = 0;
        unsafe { sys::napi_typeof(env, value, &mut t) };
        let (mut code, mut name, mut message) = (None, None, None);
        if t == sys::ValueType::napi_object || t == sys::ValueType::napi_function {
            code = unsafe { string_property(env, value, c"code") };
            name = unsafe { string_property(env, value, c"name") };
            message = unsafe { string_property(env, value, c"message") };
        }
        let message = message.unwrap_or_else(|| {
            let mut s = std::ptr::null_mut();
            if unsafe { sys::napi_coerce_to_string(env, value, &mut s) } == sys::Status::napi_ok {
                unsafe { String::from_napi_value(env, s) }.unwrap_or_default()
            } else {
                let mut exc = std::ptr::null_mut();
                unsafe { sys::napi_get_and_clear_last_exception(env, &mut exc) };
                "the filesystem callback rejected".into()
            }
        });
        let mapped = [code.as_deref(), name.as_deref(), Some(message.as_str())]
            .into_iter()
            .flatten()
            .map(error_code)
            .find(|c| *c != "EIO")
            .unwrap_or("EIO");
        Ok(Rejection(FsError::new(mapped, message)))
    }
}

/// Map a rejected JS call to an `FsError` with a POSIX code.
pub fn fs_error(e: napi::Error) -> FsError {
    let reason = e.reason.clone();
    FsError::new(error_code(&reason), clean_message(&reason))
}

/// Node codes appear in the message (`ENOENT: no such file or directory, open '/x'`);
/// `vscode.FileSystemError` names its code (`EntryNotFound (FileSystemError)`, code `FileNotFound`).
pub fn error_code(reason: &str) -> &'static str {
    const POSIX: &[&str] = &[
        "ENOENT", "EEXIST", "EISDIR", "ENOTDIR", "EACCES", "EPERM", "ENOTEMPTY", "EBUSY", "EROFS", "ENOSPC", "EMFILE", "ENAMETOOLONG",
        "ELOOP", "EINVAL", "EXDEV", "EFBIG", "EIO",
    ];
    const VSCODE: &[(&str, &str)] = &[
        ("FileNotFound", "ENOENT"),
        ("EntryNotFound", "ENOENT"),
        ("FileExists", "EEXIST"),
        ("EntryExists", "EEXIST"),
        ("FileIsADirectory", "EISDIR"),
        ("EntryIsADirectory", "EISDIR"),
        ("FileNotADirectory", "ENOTDIR"),
        ("EntryNotADirectory", "ENOTDIR"),
        ("NoPermissions", "EACCES"),
        ("Unavailable", "EIO"),
    ];
    for word in reason.split(|c: char| !c.is_ascii_alphanumeric()) {
        if let Some(code) = POSIX.iter().find(|c| **c == word) {
            return code;
        }
        if let Some((_, code)) = VSCODE.iter().find(|(name, _)| *name == word) {
            return code;
        }
    }
    "EIO"
}

fn clean_message(reason: &str) -> String {
    reason.strip_prefix("Error: ").unwrap_or(reason).to_string()
}

#[async_trait]
impl FileSystem for NodeFs {
    async fn read(&self, path: &str) -> Result<Vec<u8>, FsError> {
        let cb = self.get()?;
        let data = call(&cb.read_file, path.to_string()).await?;
        Ok(data.to_vec())
    }

    async fn write(&self, path: &str, data: &[u8]) -> Result<(), FsError> {
        let cb = self.get()?;
        call(&cb.write_file, FnArgs::from((path.to_string(), Uint8Array::new(data.to_vec())))).await?;
        Ok(())
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        let cb = self.get()?;
        let v = call(&cb.stat, path.to_string()).await?;
        stat_from_js(&v).map_err(|m| FsError::new("EIO", format!("stat callback returned {m}")))
    }

    async fn read_dir(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        let cb = self.get()?;
        let v = call(&cb.read_directory, path.to_string()).await?;
        dir_entries_from_js(&v).map_err(|m| FsError::new("EIO", format!("readDirectory callback returned {m}")))
    }

    async fn create_dir_all(&self, path: &str) -> Result<(), FsError> {
        let cb = self.get()?;
        call(&cb.create_directory, path.to_string()).await?;
        Ok(())
    }

    async fn remove(&self, path: &str) -> Result<(), FsError> {
        let cb = self.get()?;
        call(&cb.delete, path.to_string()).await?;
        Ok(())
    }

    async fn rename(&self, from: &str, to: &str) -> Result<(), FsError> {
        let cb = self.get()?;
        call(&cb.rename, FnArgs::from((from.to_string(), to.to_string()))).await?;
        Ok(())
    }

    async fn set_mode(&self, path: &str, mode: u32) -> Result<(), FsError> {
        let cb = self.get()?;
        if let Some(f) = &cb.set_mode {
            call(f, FnArgs::from((path.to_string(), mode))).await?;
        }
        Ok(())
    }
}
