//! A second consumer in a scenario's group, under its own client id (so what kfake saw of the
//! consumer under test leaves it out): the live twin of a static member, holding its
//! `group.instance.id` while the member is fenced.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use mooring_consumer::{Consumer, ConsumerConfig, ConsumerError, ConsumerEvent};
use mooring_group::MemberSnapshot;
use tokio::task::JoinHandle;

use super::{props, spawn_run, Handled, Scenario};

/// The client id of a [`Twin`].
pub const TWIN_CLIENT_ID: &str = "mooring-twin";

/// A second consumer of the scenario's topic in its group.
pub struct Twin {
    consumer: Consumer,
    handled: Arc<Mutex<Vec<Handled>>>,
    run: Option<JoinHandle<Result<(), ConsumerError>>>,
}

impl Scenario {
    /// Starts a [`Twin`] with the scenario's properties, then `extra` (which wins).
    pub fn start_twin(&self, extra: &[(&str, &str)]) -> Twin {
        let mut all = extra.to_vec();
        all.push(("client.id", TWIN_CLIENT_ID));
        let config = ConsumerConfig::from_properties(props(&self.kfake, &self.group, &all));
        let consumer = Consumer::new(config.unwrap()).unwrap();
        let handled: Arc<Mutex<Vec<Handled>>> = Arc::default();
        let events: Arc<Mutex<Vec<(SystemTime, ConsumerEvent)>>> = Arc::default();
        let run = spawn_run(&consumer, &self.topic, handled.clone(), events);
        Twin {
            consumer,
            handled,
            run: Some(run),
        }
    }
}

impl Twin {
    /// The twin's member state while it runs.
    pub fn member(&self) -> Option<MemberSnapshot> {
        self.consumer.member_state()
    }

    /// How many records it handled.
    pub fn handled(&self) -> usize {
        self.handled.lock().unwrap().len()
    }

    /// Shuts it down; `run` must end without an error.
    pub async fn stop(mut self) {
        self.consumer.shutdown_handle().shutdown();
        let run = self.run.take().expect("running");
        let result = tokio::time::timeout(Duration::from_secs(15), run)
            .await
            .expect("the twin's run returns after shutdown")
            .expect("run task");
        if let Err(e) = result {
            panic!("the twin's run ended with an error: {e}");
        }
    }
}
