//! The errors of the JS API: a rejected `start()`/`execute()` is an `Error` whose `code` is an
//! [`ErrorCode`], and `waitUntilClosed()` resolves with a [`Closed`] that says why. JS code (the
//! extension, the CLI) branches on these codes, never on message text.

use napi::bindgen_prelude::{PromiseRaw, ToNapiValue};
use napi::{Env, JsError};
use napi_derive::napi;
use oh_transport::{ErrorCode as T, TransportError};

/// The `code` of an error the executor rejects with, and `Closed.code`: the napi form of
/// `oh_transport::ErrorCode`, built from the same list (`oh_transport::error_codes!`), so the
/// strings and their docs exist once; napi-rs writes them into `index.d.ts`.
macro_rules! napi_error_code {
    ($($(#[doc = $doc:literal])* $variant:ident = $text:tt,)*) => {
        /// The `code` of an error the executor rejects with (and of `Closed`): ENORUNTIME, EAUTH,
        /// EREFUSED, EPROTOCOL and EUNREACHABLE (registration), ESTOPPED, ESHELL.
        #[napi(string_enum)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum ErrorCode {
            $($(#[doc = $doc])* #[napi(value = $text)] $variant,)*
        }

        impl From<T> for ErrorCode {
            fn from(code: T) -> Self {
                match code {
                    $(T::$variant => ErrorCode::$variant,)*
                }
            }
        }

        impl From<ErrorCode> for T {
            fn from(code: ErrorCode) -> Self {
                match code {
                    $(ErrorCode::$variant => T::$variant,)*
                }
            }
        }
    };
}
oh_transport::error_codes!(napi_error_code);

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        T::from(self).as_str()
    }

    /// The code of a failed registration (classified by the transport).
    pub fn of(e: &TransportError) -> Self {
        e.code().into()
    }
}

/// An error for JS with an [`ErrorCode`] as its `code` property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodedError {
    pub code: ErrorCode,
    pub message: String,
}

impl CodedError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        CodedError { code, message: message.into() }
    }
}

impl From<&TransportError> for CodedError {
    fn from(e: &TransportError) -> Self {
        CodedError::new(ErrorCode::of(e), e.to_string())
    }
}

/// A Promise that resolves with the future's value or rejects with an `Error` whose `code` is the
/// [`CodedError`]'s. (napi's own async functions can only reject with its fixed `Status` codes.)
pub fn coded_promise<'env, T, F>(env: &'env Env, fut: F) -> napi::Result<PromiseRaw<'env, T>>
where
    T: ToNapiValue + Send + 'static,
    F: std::future::Future<Output = Result<T, CodedError>> + Send + 'static,
{
    env.spawn_future_with_callback(async move { Ok(fut.await) }, |env, result| match result {
        Ok(v) => Ok(v),
        Err(e) => {
            let js = JsError::from(napi::Error::new(e.code.as_str(), e.message)).into_unknown(*env);
            Err(napi::Error::from(js))
        }
    })
}

/// Why the connection ended for good.
#[napi(string_enum = "lowercase")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// `stop()` was called.
    Stopped,
    /// A newer executor registered for the same conversation (`oh_executor_replaced`).
    Replaced,
    /// A permanent failure (`code` says which).
    Failed,
}

/// What `waitUntilClosed()` resolves with.
#[napi(object, object_from_js = false)]
pub struct Closed {
    pub reason: CloseReason,
    /// Set when `reason` is `failed`.
    pub code: Option<ErrorCode>,
    /// The last status message (e.g. the server's refusal).
    pub message: Option<String>,
}
