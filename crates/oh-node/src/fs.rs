//! The core `FileSystem` trait over Promise-returning JS callbacks (the rspack `ThreadsafeNodeFS`
//! pattern). Every call goes through `call_async_catch`, so a throwing callback becomes an
//! `FsError` instead of a fatal exception in the extension host. A rejection's `code` property
//! becomes the `FsError` code through [`posix_code`], the one map of JS error codes.

use std::sync::RwLock;

use crate::dto::{DirEntry as JsDirEntry, FileStat as JsFileStat, Ignored};
use async_trait::async_trait;
use napi::bindgen_prelude::{CallbackContext, FnArgs, FromNapiValue, PromiseRaw, Uint8Array};
use napi::sys;
use napi::threadsafe_function::ThreadsafeFunction;
use napi::Status;
use napi_derive::napi;
use oh_files::{DirEntry, FileStat, FileSystem, FsError};

type Tsfn<A, R> = ThreadsafeFunction<A, R, A, Status, false>;
type SetModeFn = Tsfn<FnArgs<(String, u32)>, FsPromise<Ignored>>;

/// The filesystem callbacks. Paths are absolute POSIX paths. A callback rejects with an error whose
/// `code` is a POSIX name (`ENOENT`, what `node:fs` sets) or a `vscode.FileSystemError` code
/// (`FileNotFound`, ...); any other rejection is `EIO`.
#[napi(object, object_to_js = false)]
pub struct FsCallbacks {
    #[napi(ts_type = "(path: string) => Promise<Uint8Array>")]
    pub read_file: ThreadsafeFunction<String, FsPromise<Uint8Array>, String, Status, false>,
    #[napi(ts_type = "(path: string, data: Uint8Array) => Promise<void>")]
    pub write_file: Tsfn<FnArgs<(String, Uint8Array)>, FsPromise<Ignored>>,
    /// Stat, following symlinks.
    #[napi(ts_type = "(path: string) => Promise<FileStat>")]
    pub stat: ThreadsafeFunction<String, FsPromise<JsFileStat>, String, Status, false>,
    /// The entries of a directory, symlinks followed.
    #[napi(ts_type = "(path: string) => Promise<Array<DirEntry>>")]
    pub read_directory: ThreadsafeFunction<String, FsPromise<Vec<JsDirEntry>>, String, Status, false>,
    /// `mkdir -p`.
    #[napi(ts_type = "(path: string) => Promise<unknown>")]
    pub create_directory: ThreadsafeFunction<String, FsPromise<Ignored>, String, Status, false>,
    /// Remove a file.
    #[napi(ts_type = "(path: string) => Promise<unknown>")]
    pub delete: ThreadsafeFunction<String, FsPromise<Ignored>, String, Status, false>,
    #[napi(ts_type = "(from: string, to: string) => Promise<unknown>")]
    pub rename: Tsfn<FnArgs<(String, String)>, FsPromise<Ignored>>,
    /// Optional `chmod`: a `write` that creates a file sets it to 0o664, as the action server
    /// does. Without it (e.g. `vscode.workspace.fs`, which has no modes) new files keep the
    /// filesystem's default mode.
    #[napi(ts_type = "(path: string, mode: number) => Promise<unknown>")]
    pub set_mode: Option<SetModeFn>,
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
/// error's `code` (read on the JS thread), so `vscode.FileSystemError`s and `node:fs` errors map to
/// the right POSIX code whatever their message says.
pub struct FsPromise<T>(pub(crate) tokio::sync::oneshot::Receiver<Result<T, FsError>>);

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
        let (mut code, mut message) = (None, None);
        if t == sys::ValueType::napi_object || t == sys::ValueType::napi_function {
            code = unsafe { string_property(env, value, c"code") };
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
        Ok(Rejection(FsError::new(code.as_deref().map_or("EIO", posix_code), message)))
    }
}

/// A callback that threw instead of returning a Promise (or could not be called): `EIO`.
fn fs_error(e: napi::Error) -> FsError {
    let reason = e.reason.clone();
    FsError::new("EIO", reason.strip_prefix("Error: ").unwrap_or(&reason).to_string())
}

/// The one map from a JS error's `code` to the POSIX name the executor core reports: POSIX names
/// (what `node:fs` sets) pass through, `vscode.FileSystemError` codes are translated, anything
/// else is `EIO`.
pub fn posix_code(code: &str) -> &'static str {
    const POSIX: &[&str] = &[
        "ENOENT",
        "EEXIST",
        "EISDIR",
        "ENOTDIR",
        "EACCES",
        "EPERM",
        "ENOTEMPTY",
        "EBUSY",
        "EROFS",
        "ENOSPC",
        "EMFILE",
        "ENAMETOOLONG",
        "ELOOP",
        "EINVAL",
        "EXDEV",
        "EFBIG",
        "EIO",
    ];
    // The codes of vscode.FileSystemError.
    const VSCODE: &[(&str, &str)] = &[
        ("FileNotFound", "ENOENT"),
        ("FileExists", "EEXIST"),
        ("FileIsADirectory", "EISDIR"),
        ("FileNotADirectory", "ENOTDIR"),
        ("NoPermissions", "EACCES"),
        ("Unavailable", "EIO"),
    ];
    if let Some(c) = POSIX.iter().find(|c| **c == code) {
        return c;
    }
    VSCODE.iter().find(|(name, _)| *name == code).map_or("EIO", |(_, c)| c)
}

#[async_trait]
impl FileSystem for NodeFs {
    async fn read(&self, path: &str) -> Result<Vec<u8>, FsError> {
        let cb = self.get()?;
        let data = call(&cb.read_file, path.to_string()).await?;
        Ok(data.to_vec())
    }

    /// Copies the callback's bytes into `buf`, so that the editor's reused buffers (no page
    /// faults for a large file) work through VS Code's file system too.
    async fn read_into(&self, path: &str, buf: &mut Vec<u8>) -> Result<(), FsError> {
        let cb = self.get()?;
        let data = call(&cb.read_file, path.to_string()).await?;
        buf.clear();
        buf.extend_from_slice(&data);
        Ok(())
    }

    async fn write(&self, path: &str, data: &[u8]) -> Result<(), FsError> {
        let cb = self.get()?;
        call(&cb.write_file, FnArgs::from((path.to_string(), Uint8Array::new(data.to_vec())))).await?;
        Ok(())
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        let cb = self.get()?;
        Ok(call(&cb.stat, path.to_string()).await?.into())
    }

    async fn read_dir(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        let cb = self.get()?;
        Ok(call(&cb.read_directory, path.to_string()).await?.into_iter().map(Into::into).collect())
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
