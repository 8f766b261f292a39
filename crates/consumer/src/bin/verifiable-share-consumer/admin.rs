//! `--offset-reset-strategy`: the share group's `share.auto.offset.reset`, set as Java's tool sets
//! it, with the admin API's IncrementalAlterConfigs on the group's config resource (OpType SET),
//! sent to any broker, retried on retriable errors, all within 60 s (Java's tool waits 60 s for
//! `incrementalAlterConfigs(...).all()`). Needs Kafka 4.0 or later (group config resources).

use std::time::Duration;

use mooring_client::{Client, ClientConfig, Error as ClientError};
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::incremental_alter_configs::{AlterConfigsResource, AlterableConfig};
use mooring_wire::messages::IncrementalAlterConfigsRequest;
use tokio::time::Instant;

/// `ConfigResource.Type.GROUP`.
const GROUP_RESOURCE: i8 = 32;
/// `AlterConfigOp.OpType.SET`.
const SET: i8 = 0;
/// How long Java's tool waits for the change.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Sets `share.auto.offset.reset` of `group` to `strategy`.
pub async fn set_offset_reset(
    config: ClientConfig,
    group: &str,
    strategy: &str,
) -> Result<(), ClientError> {
    let backoff = config.retry_backoff;
    let client = Client::new(config)?;
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let attempt = tokio::time::timeout_at(deadline, alter(&client, group, strategy)).await;
        let error = match attempt {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(error)) => error,
            Err(_) => {
                return Err(ClientError::Timeout {
                    api: "IncrementalAlterConfigs",
                    broker: "any broker".into(),
                    after: TIMEOUT,
                })
            }
        };
        if !error.is_retriable() || Instant::now() + backoff >= deadline {
            return Err(error);
        }
        tracing::info!(%error, "setting share.auto.offset.reset: retrying");
        tokio::time::sleep(backoff).await;
    }
}

async fn alter(client: &Client, group: &str, strategy: &str) -> Result<(), ClientError> {
    let response = client
        .send_any(|_version| IncrementalAlterConfigsRequest {
            resources: vec![AlterConfigsResource {
                resource_type: GROUP_RESOURCE,
                resource_name: group.to_owned(),
                configs: vec![AlterableConfig {
                    name: "share.auto.offset.reset".into(),
                    config_operation: SET,
                    value: Some(strategy.to_owned()),
                    ..AlterableConfig::default()
                }],
                ..AlterConfigsResource::default()
            }],
            validate_only: false,
            ..IncrementalAlterConfigsRequest::default()
        })
        .await?;
    let answer = response
        .responses
        .iter()
        .find(|r| r.resource_type == GROUP_RESOURCE && r.resource_name == group);
    let Some(answer) = answer else {
        return Err(ClientError::Broker {
            api: "IncrementalAlterConfigs",
            code: ErrorCode::UnknownServerError,
            message: Some(format!("no answer for group {group}")),
        });
    };
    match ErrorCode::from_i16(answer.error_code) {
        ErrorCode::None => Ok(()),
        code => Err(ClientError::Broker {
            api: "IncrementalAlterConfigs",
            code,
            message: answer.error_message.clone(),
        }),
    }
}
