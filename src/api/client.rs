//! The typed client of the data plane: add, read, delete and scan a counter on a node, each
//! answered with the node's body or a [`CallError`] that says whether the request may have
//! reached the node.

use super::bodies::{AddRequest, AddResponse, ErrorBody, ReadResponse, ScanResponse};
use super::consistency::ConsistencyLevel;
use super::key::CounterKey;
use super::scope::DeleteScope;
use serde::de::DeserializeOwned;
use std::time::Duration;

/// Why a call got no usable answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The request certainly never reached the node (`connection_refused`, ...).
    #[error("not sent: {code}")]
    NotSent {
        /// What went wrong, as a history's `error` field says it.
        code: &'static str,
    },
    /// The request may have reached the node, but no answer came (`client_timeout`, ...).
    #[error("no answer: {code}")]
    NoAnswer {
        /// What went wrong, as a history's `error` field says it.
        code: &'static str,
    },
    /// The node answered with an error status.
    #[error("{status} {code}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The error body's code (`write_timeout`, `unavailable`, ...), or `http_<status>`.
        code: String,
    },
    /// The node answered 2xx with a body that is not what the API promises.
    #[error("bad answer: {0}")]
    BadAnswer(String),
}

/// `http://{addr}/{segments...}`, each segment percent-encoded.
pub fn url(addr: &str, segments: &[&str]) -> reqwest::Url {
    let mut url = reqwest::Url::parse(&format!("http://{addr}/"))
        .unwrap_or_else(|_| reqwest::Url::parse("http://127.0.0.1/").expect("a static URL"));
    if let Ok(mut path) = url.path_segments_mut() {
        path.pop_if_empty().extend(segments);
    }
    url
}

/// Sends a request and reads its JSON answer.
pub async fn call<T: DeserializeOwned>(request: reqwest::RequestBuilder) -> Result<T, CallError> {
    let response = request.send().await.map_err(|e| transport_error(&e))?;
    let status = response.status();
    if !status.is_success() {
        let code = response
            .json::<ErrorBody>()
            .await
            .map(|b| b.error)
            .unwrap_or_else(|_| format!("http_{}", status.as_u16()));
        return Err(CallError::Status {
            status: status.as_u16(),
            code,
        });
    }
    response
        .json::<T>()
        .await
        .map_err(|e| CallError::BadAnswer(e.to_string()))
}

fn transport_error(error: &reqwest::Error) -> CallError {
    if error.is_connect() {
        CallError::NotSent {
            code: "connection_refused",
        }
    } else if error.is_builder() {
        CallError::NotSent {
            code: "transport_error",
        }
    } else if error.is_timeout() {
        CallError::NoAnswer {
            code: "client_timeout",
        }
    } else {
        CallError::NoAnswer {
            code: "transport_error",
        }
    }
}

/// How long every bundled client keeps an idle connection for reuse: shorter than a node
/// keeps one open, so that no request goes out on a connection the node is closing.
pub const IDLE_POOL_TIMEOUT: Duration = Duration::from_secs(4);

/// Talks to nodes' data plane over HTTP.
#[derive(Debug, Clone)]
pub struct DataClient {
    http: reqwest::Client,
}

impl DataClient {
    /// A client whose requests give up after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .pool_max_idle_per_host(64)
            .pool_idle_timeout(IDLE_POOL_TIMEOUT)
            .build()
            .unwrap_or_default();
        DataClient { http }
    }

    fn counter_url(addr: &str, key: &CounterKey, cl: Option<ConsistencyLevel>) -> reqwest::Url {
        let mut url = url(addr, &["v1", "counters", &key.partition, &key.cell]);
        if let Some(cl) = cl {
            url.query_pairs_mut().append_pair("cl", cl.as_str());
        }
        url
    }

    fn partition_url(addr: &str, partition: &str, cl: ConsistencyLevel) -> reqwest::Url {
        let mut url = url(addr, &["v1", "counters", partition]);
        url.query_pairs_mut().append_pair("cl", cl.as_str());
        url
    }

    /// `POST /v1/counters/{partition}/{cell}`: adds `delta`.
    pub async fn add(
        &self,
        addr: &str,
        key: &CounterKey,
        delta: i64,
        cl: ConsistencyLevel,
    ) -> Result<AddResponse, CallError> {
        let body = AddRequest {
            delta,
            cl: Some(cl),
        };
        call(
            self.http
                .post(Self::counter_url(addr, key, None))
                .json(&body),
        )
        .await
    }

    /// `GET /v1/counters/{partition}/{cell}`: reads a counter.
    pub async fn read(
        &self,
        addr: &str,
        key: &CounterKey,
        cl: ConsistencyLevel,
    ) -> Result<ReadResponse, CallError> {
        call(self.http.get(Self::counter_url(addr, key, Some(cl)))).await
    }

    /// `DELETE`: the counter's row or column, or its whole partition.
    pub async fn delete(
        &self,
        addr: &str,
        key: &CounterKey,
        scope: DeleteScope,
        cl: ConsistencyLevel,
    ) -> Result<AddResponse, CallError> {
        let url = match scope {
            DeleteScope::Partition => Self::partition_url(addr, &key.partition, cl),
            DeleteScope::Row => Self::counter_url(addr, key, Some(cl)),
            DeleteScope::Column => {
                let mut url = Self::counter_url(addr, key, Some(cl));
                url.query_pairs_mut().append_pair("scope", scope.as_str());
                url
            }
        };
        call(self.http.delete(url)).await
    }

    /// `GET /v1/counters/{partition}`: every counter of a partition.
    pub async fn scan(
        &self,
        addr: &str,
        partition: &str,
        cl: ConsistencyLevel,
    ) -> Result<ScanResponse, CallError> {
        call(self.http.get(Self::partition_url(addr, partition, cl))).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_percent_encode_each_segment_and_name_the_level() {
        let key = CounterKey::new("a b", "c?d").expect("a key");
        let u = DataClient::counter_url("127.0.0.1:9", &key, Some(ConsistencyLevel::All));
        assert_eq!(
            u.as_str(),
            "http://127.0.0.1:9/v1/counters/a%20b/c%3Fd?cl=ALL"
        );
    }

    #[tokio::test]
    async fn a_refused_connection_was_never_sent() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        drop(listener);
        let key = CounterKey::new("p", "c").expect("a key");
        let client = DataClient::new(Duration::from_secs(1));
        let err = client
            .add(&addr, &key, 1, ConsistencyLevel::One)
            .await
            .expect_err("nothing listens");
        assert_eq!(
            err,
            CallError::NotSent {
                code: "connection_refused"
            }
        );
    }
}
