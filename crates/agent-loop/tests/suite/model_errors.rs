//! Failures that end a request, and the words the user reads about them.

use std::time::Duration;

use agent_loop::ModelError;
use agent_loop::model::ChatCompletionsClient;
use test_support::{MockModelServer, ScriptedReply};

use super::{client, request, retries, run, settings};

/// A port on 127.0.0.1 that nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test]
async fn a_refused_local_connection_names_the_url_and_is_retried_only_once() {
    let port = closed_port();
    let base_url = format!("http://127.0.0.1:{port}/v1");
    // Four retries allowed; a server that is not there gets one.
    let mut settings = settings(&base_url, 4);
    settings.base_url_setting = Some("KNACK_BASE_URL".into());
    let client = ChatCompletionsClient::new(settings).unwrap();
    let (result, updates) = run(&client, &request()).await;

    let err = result.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "nothing is listening at {base_url} (connection refused)"
        )),
        "{text}"
    );
    assert!(
        text.contains("start the model server") && text.contains("KNACK_BASE_URL"),
        "{text}"
    );
    assert!(text.starts_with("gave up after 2 attempts"), "{text}");
    assert_eq!(retries(&updates).len(), 1);
    assert_eq!(
        retries(&updates)[0].2,
        format!("nothing is listening at {base_url}")
    );
}

#[tokio::test]
async fn without_retries_the_refusal_is_returned_as_is() {
    let port = closed_port();
    let (result, updates) = run(
        &client(&format!("http://127.0.0.1:{port}/v1"), 0),
        &request(),
    )
    .await;
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::LocalServerDown { .. }), "{err}");
    assert!(err.is_retryable());
    assert!(updates.is_empty());
}

#[tokio::test]
async fn a_rejected_key_is_not_retried_and_says_what_to_set() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(ScriptedReply::status(401).with_error_message("Incorrect API key provided"));
    let (result, updates) = run(&client(&server.base_url(), 3), &request()).await;
    let text = result.unwrap_err().to_string();
    assert!(text.contains("rejected the API key (401)"), "{text}");
    assert!(text.contains("KNACK_API_KEY"), "{text}");
    assert!(text.contains("Incorrect API key provided"), "{text}");
    assert!(updates.is_empty());
    assert_eq!(server.chat_requests().len(), 1);
}

#[tokio::test]
async fn other_client_errors_are_not_retried() {
    for status in [400, 404] {
        let server = MockModelServer::start().await.unwrap();
        server.enqueue(ScriptedReply::status(status));
        let (result, updates) = run(&client(&server.base_url(), 3), &request()).await;
        let err = result.unwrap_err();
        assert!(matches!(err, ModelError::Rejected { .. }), "{err}");
        assert!(updates.is_empty());
        assert_eq!(server.chat_requests().len(), 1);
        if status == 404 {
            assert!(err.to_string().contains("model.base_url"), "{err}");
        }
    }
}

#[tokio::test]
async fn a_server_that_never_starts_answering_hits_the_first_byte_timeout() {
    let server = MockModelServer::start().await.unwrap();
    // The reply would come after ten minutes (the server is dropped long
    // before): getting the timeout error at all shows the 150 ms deadline
    // fired, however slow the machine, and the hang guard catches a wait.
    server.enqueue(ScriptedReply::text("too late").first_byte_delay_ms(600_000));
    let mut settings = settings(&server.base_url(), 0);
    settings.timeouts.first_byte = Duration::from_millis(150);
    let client = ChatCompletionsClient::new(settings).unwrap();
    let (result, _) = super::within(super::HANG, run(&client, &request())).await;
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::FirstByteTimeout { .. }), "{err}");
    assert!(
        err.to_string().contains("model.first_byte_timeout_secs"),
        "{err}"
    );
}
