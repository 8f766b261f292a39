//! Which brokers get a request when the memory budget cannot hold one of every size
//! (`Fetcher::admit`): every broker with partitions to fetch has its turn.

use super::*;

/// Metadata in which node N (1..=`nodes`) leads partition N-1 of `topic`.
fn spread(topic: &str, nodes: i32) -> Metadata {
    let mut m = metadata(&[(topic, nodes)]);
    for node in 1..=nodes {
        m.brokers.insert(
            node,
            BrokerInfo {
                node_id: node,
                host: "127.0.0.1".into(),
                port: node,
                rack: None,
            },
        );
        if let Some(p) = m
            .topics
            .get_mut(topic)
            .and_then(|t| t.partitions.get_mut(&(node - 1)))
        {
            p.leader = node;
        }
    }
    m
}

impl Harness {
    /// One round of `send_fetches` without sending: the brokers admitted (now busy).
    fn admit_round(&mut self, md: &Metadata) -> Vec<i32> {
        let by_node = self.fetcher.plan(md, Instant::now());
        let admitted: Vec<i32> = self
            .fetcher
            .admit(by_node, Instant::now())
            .into_iter()
            .map(|(node, _, _)| node)
            .collect();
        self.fetcher.busy.extend(admitted.iter().copied());
        admitted
    }

    /// `node` answered (nothing): its request is done.
    fn answered(&mut self, node: i32) {
        self.fetcher.busy.remove(&node);
        self.fetcher.reserved.remove(&node);
    }
}

/// Three brokers, nothing held: each gets a request at once (two requests of half the budget
/// each left the third waiting for as long as the other two kept answering).
#[tokio::test(start_paused = true)]
async fn every_broker_with_partitions_to_fetch_gets_a_request() {
    let md = spread("a", 3);
    let mut h = harness(&[tp("a", 0), tp("a", 1), tp("a", 2)]);
    assert_eq!(h.admit_round(&md), [1, 2, 3]);
    let reserved: usize = h.fetcher.reserved.values().sum();
    assert!(reserved <= h.fetcher.shared.memory.limit(), "{reserved}");
}

/// When the budget has room for one request at a time, the brokers take turns: an answer frees
/// the room for the next broker, not for the one that answered.
#[tokio::test(start_paused = true)]
async fn brokers_take_turns_when_the_budget_holds_one_request() {
    let md = spread("a", 3);
    let mut h = harness(&[tp("a", 0), tp("a", 1), tp("a", 2)]);
    let memory = Arc::clone(&h.fetcher.shared.memory);
    // Records held by the handlers: room for one request only.
    let held = memory.frame(memory.limit() - 300 * 1024).freeze();
    let mut order = Vec::new();
    for _ in 0..6 {
        let admitted = h.admit_round(&md);
        assert_eq!(admitted.len(), 1, "{admitted:?}");
        order.push(admitted[0]);
        h.answered(admitted[0]);
    }
    assert_eq!(order, [1, 2, 3, 1, 2, 3]);
    drop(held);
}
