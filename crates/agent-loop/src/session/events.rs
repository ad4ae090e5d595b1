//! Where a session's events go: an unbounded channel the frontend drains.
//! A frontend that went away is not an error; events are then dropped.

use agent_protocol::Event;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

#[derive(Debug, Clone)]
pub struct EventSink {
    tx: UnboundedSender<Event>,
}

impl EventSink {
    pub fn channel() -> (Self, UnboundedReceiver<Event>) {
        let (tx, rx) = unbounded_channel();
        (Self { tx }, rx)
    }

    pub fn send(&self, event: Event) {
        let _ = self.tx.send(event);
    }
}
