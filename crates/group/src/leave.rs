//! Leaving the group, as every member kind does it: the leave request (LeaveGroup, or a
//! ConsumerGroupHeartbeat with a leaving epoch) is sent at most twice, rediscovering the
//! coordinator after a connection failure or a coordinator move and waiting `retry.backoff.ms`
//! between the two; what the member's reaction table calls done ends it, anything else is the
//! error the member builds.

use std::future::Future;

use mooring_client::error::{Error, Result};
use mooring_wire::error_code::ErrorCode;
use tokio::time::sleep;

use crate::config::GroupConfig;
use crate::reaction::Reaction;
use crate::transport::GroupTransport;

/// Sends the leave `send` makes (the answer's error code) until `react` says it is done, at most
/// twice; a code it refuses becomes `refused(code)`.
pub(crate) async fn with_retry<T, F, Fut>(
    transport: &T,
    config: &GroupConfig,
    react: fn(ErrorCode) -> Reaction,
    mut send: F,
    refused: impl Fn(ErrorCode) -> Error,
) -> Result<()>
where
    T: GroupTransport,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<ErrorCode>>,
{
    let mut attempts = 0;
    loop {
        attempts += 1;
        let code = match send().await {
            Ok(code) => code,
            Err(e) if e.is_retriable() && attempts < 2 => {
                transport.forget_coordinator(&config.group_id);
                sleep(config.retry_backoff).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        match react(code) {
            Reaction::Proceed | Reaction::AlreadyGone => return Ok(()),
            Reaction::Rediscover if attempts < 2 => {
                transport.forget_coordinator(&config.group_id);
            }
            Reaction::RetryAfterBackoff if attempts < 2 => {}
            _ => return Err(refused(code)),
        }
        sleep(config.retry_backoff).await;
    }
}
