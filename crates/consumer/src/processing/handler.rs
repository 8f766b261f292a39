//! The user's record handler: an async function of a [`ConsumerRecord`] returning `Result`.
//! Any `Fn(ConsumerRecord) -> impl Future<Output = Result<(), E>>` is a handler; implement the
//! trait directly for a handler with state.

use std::future::Future;
use std::sync::Arc;

use super::ConsumerRecord;

/// A handler's error, type-erased so events and metrics need no type parameter.
pub type HandlerError = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// Processes one record. Called from Tokio tasks, possibly many at once (up to the configured
/// concurrency), never twice at once for records that must stay ordered.
///
/// ```
/// use mooring_consumer::processing::{ConsumerRecord, Handler};
///
/// struct Printer;
///
/// impl Handler for Printer {
///     type Error = std::io::Error;
///
///     async fn handle(&self, record: ConsumerRecord) -> Result<(), Self::Error> {
///         println!("{}-{}@{}", record.topic(), record.partition(), record.offset());
///         Ok(())
///     }
/// }
///
/// // A closure works too; `String` errors convert.
/// fn assert_handler<H: Handler>(_: H) {}
/// assert_handler(|record: ConsumerRecord| async move {
///     if record.value().is_none() {
///         return Err(format!("tombstone at {}", record.offset()));
///     }
///     Ok(())
/// });
/// assert_handler(Printer);
/// ```
pub trait Handler: Send + Sync + 'static {
    /// The handler's error; anything convertible into a boxed error (including `String`).
    type Error: Into<Box<dyn std::error::Error + Send + Sync + 'static>> + Send + 'static;

    /// Processes one record. `Ok` marks it finished (committable once the records before it are);
    /// `Err` goes to the [`FailurePolicy`](super::FailurePolicy).
    fn handle(
        &self,
        record: ConsumerRecord,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;
}

impl<F, Fut, E> Handler for F
where
    F: Fn(ConsumerRecord) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), E>> + Send,
    E: Into<Box<dyn std::error::Error + Send + Sync + 'static>> + Send + 'static,
{
    type Error = E;

    fn handle(&self, record: ConsumerRecord) -> impl Future<Output = Result<(), E>> + Send {
        self(record)
    }
}

/// How a handler of this crate says a record was not processed, beside `Ok` (processed) and an
/// error (a failure, for the [`FailurePolicy`](super::FailurePolicy)): returned as the error and
/// recognised by the engine before the failure policy sees it, so it is neither a success nor a
/// failure. Crate-private: an application's handler cannot return it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NotProcessed {
    /// Handed to the application and given up unprocessed (a stream [`Delivery`] dropped without
    /// `ack` or `fail`): the offset is abandoned, and no commit ever passes it.
    ///
    /// [`Delivery`]: crate::Delivery
    #[error("the record was given up without being processed")]
    Abandoned,
    /// Never handed to the application (its record stream was gone): as if it had not started.
    #[error("the record could not be handed to the application")]
    NotHandedOut,
}

/// The error recorded when a handler panicked: the panic itself is reported by Tokio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the handler panicked")]
pub struct HandlerPanicked;
