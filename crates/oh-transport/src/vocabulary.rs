//! The executor's status and error vocabulary, written once. Each list is a macro that hands its
//! entries (`Variant = "wire string"`, with their docs) to another macro: this crate builds its
//! plain enums from it ([`ErrorCode`](crate::ErrorCode), [`ConnectionState`](crate::ConnectionState)),
//! and the Node binding builds its `#[napi(string_enum)]` enums from the very same list (napi-rs
//! can only generate TypeScript for types defined in the binding crate itself), so the extension
//! and the Node CLI read these strings from the addon's generated `index.d.ts`, not from a copy.

/// The `code` of an executor failure: what every front end prints and branches on (the
/// headless CLI, the Node binding's rejected promises and `Closed.code`, the extension).
/// `error_codes!(callback)` calls `callback! { $( $(#[doc])* Variant = "ECODE", )* }`.
#[macro_export]
macro_rules! error_codes {
    ($callback:ident) => {
        $callback! {
            /// The server has no `VsCodeRuntime` for the conversation (yet: it opens one when the
            /// conversation's agent loop starts).
            NoRuntime = "ENORUNTIME",
            /// The session API key is missing or not accepted, or the server could not prove it holds it.
            Auth = "EAUTH",
            /// The server refused the registration for another reason (no conversation id, a web
            /// page's origin, a non-websocket transport).
            Refused = "EREFUSED",
            /// The server speaks another protocol version.
            Protocol = "EPROTOCOL",
            /// No registration within the initial timeout (network error, no welcome).
            Unreachable = "EUNREACHABLE",
            /// Shut down before the registration finished.
            Stopped = "ESTOPPED",
            /// The bash session could not be started (raised by the front ends that start it,
            /// never by the transport).
            Shell = "ESHELL",
        }
    };
}

/// The connection state reported to a status observer.
/// `connection_states!(callback)` calls `callback! { $( $(#[doc])* Variant = "state", )* }`.
#[macro_export]
macro_rules! connection_states {
    ($callback:ident) => {
        $callback! {
            /// Connecting or reconnecting (with backoff).
            Connecting = "connecting",
            /// Registered and idle.
            Connected = "connected",
            /// Registered and running at least one action.
            Executing = "executing",
            /// Not connected (stopped, or replaced by a newer executor).
            Disconnected = "disconnected",
            /// A failure; the message says which.
            Error = "error",
        }
    };
}

/// A plain enum with `as_str()` from one of the lists above.
macro_rules! plain_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[doc = $doc:literal])* $variant:ident = $text:tt,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[doc = $doc])* $variant,)*
        }

        impl $name {
            /// Every value, in the list's order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The wire string (what JS sees).
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }
    };
}

macro_rules! error_code_enum {
    ($($body:tt)*) => {
        plain_enum! {
            /// The kinds of failure (see [`error_codes!`](crate::error_codes)).
            ErrorCode { $($body)* }
        }
    };
}
error_codes!(error_code_enum);

macro_rules! connection_state_enum {
    ($($body:tt)*) => {
        plain_enum! {
            /// The connection state reported to the status callback (see
            /// [`connection_states!`](crate::connection_states)).
            ConnectionState { $($body)* }
        }
    };
}
connection_states!(connection_state_enum);
