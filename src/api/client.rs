//! The typed client of the data plane: add, read, delete and scan a counter on a node, each
//! answered with the node's body or a [`CallError`] that says whether the request may have
//! reached the node.

use super::bodies::{AddRequest, ErrorBody, ReadResponse};
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
    let (status, body) = raw(request).await?;
    answer(status, &body)
}

/// Sends a request and reads its status and body. A 2xx whose body cannot be read is a bad
/// answer; an error status stands without its body.
async fn raw(request: reqwest::RequestBuilder) -> Result<(u16, Vec<u8>), CallError> {
    let response = request.send().await.map_err(|e| transport_error(&e))?;
    let status = response.status().as_u16();
    match response.bytes().await {
        Ok(body) => Ok((status, body.to_vec())),
        Err(e) if (200..300).contains(&status) => Err(CallError::BadAnswer(e.to_string())),
        Err(_) => Ok((status, Vec::new())),
    }
}

/// What a node's answer with `status` and `body` means: the JSON the API promises for a
/// 2xx, else the error body's code.
pub fn answer<T: DeserializeOwned>(status: u16, body: &[u8]) -> Result<T, CallError> {
    if !(200..300).contains(&status) {
        let code = serde_json::from_slice::<ErrorBody>(body)
            .map(|b| b.error)
            .unwrap_or_else(|_| format!("http_{status}"));
        return Err(CallError::Status { status, code });
    }
    serde_json::from_slice(body).map_err(|e| CallError::BadAnswer(e.to_string()))
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

    fn send(&self, addr: &str, call: &DataCall) -> reqwest::RequestBuilder {
        let (method, url, body) = call.request(addr);
        let request = self.http.request(method, url);
        match body {
            Some(body) => request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body),
            None => request,
        }
    }

    /// Sends `call` to node `addr`: its status and body, or why none came.
    pub async fn raw(&self, addr: &str, call: &DataCall) -> Result<(u16, Vec<u8>), CallError> {
        raw(self.send(addr, call)).await
    }

    /// `GET /v1/counters/{partition}/{cell}`: reads a counter.
    pub async fn read(
        &self,
        addr: &str,
        key: &CounterKey,
        cl: ConsistencyLevel,
    ) -> Result<ReadResponse, CallError> {
        let read = DataCall::Read {
            key: key.clone(),
            cl,
        };
        call(self.send(addr, &read)).await
    }
}

/// One request of the data plane, as docs/node-api.md defines it.
#[derive(Debug, Clone)]
pub enum DataCall {
    /// `POST /v1/counters/{partition}/{cell}`: add `delta`.
    Add {
        /// The counter.
        key: CounterKey,
        /// What to add.
        delta: i64,
        /// The consistency level.
        cl: ConsistencyLevel,
    },
    /// `GET /v1/counters/{partition}/{cell}`: read a counter.
    Read {
        /// The counter.
        key: CounterKey,
        /// The consistency level.
        cl: ConsistencyLevel,
    },
    /// `DELETE`: a counter's row or column, or its whole partition.
    Delete {
        /// The counter (its partition, for a partition delete).
        key: CounterKey,
        /// What the delete covers.
        scope: DeleteScope,
        /// The consistency level.
        cl: ConsistencyLevel,
    },
    /// `GET /v1/counters/{partition}`: every counter of a partition.
    Scan {
        /// The partition.
        partition: String,
        /// The consistency level.
        cl: ConsistencyLevel,
    },
}

impl DataCall {
    /// The request to node `addr`: its method, URL and JSON body.
    pub fn request(&self, addr: &str) -> (reqwest::Method, reqwest::Url, Option<Vec<u8>>) {
        use reqwest::Method;
        let counter = |key: &CounterKey, cl: Option<ConsistencyLevel>| {
            let mut url = url(addr, &["v1", "counters", &key.partition, &key.cell]);
            if let Some(cl) = cl {
                url.query_pairs_mut().append_pair("cl", cl.as_str());
            }
            url
        };
        let partition = |partition: &str, cl: ConsistencyLevel| {
            let mut url = url(addr, &["v1", "counters", partition]);
            url.query_pairs_mut().append_pair("cl", cl.as_str());
            url
        };
        match self {
            DataCall::Add { key, delta, cl } => {
                let body = AddRequest {
                    delta: *delta,
                    cl: Some(*cl),
                };
                let body = serde_json::to_vec(&body).unwrap_or_default();
                (Method::POST, counter(key, None), Some(body))
            }
            DataCall::Read { key, cl } => (Method::GET, counter(key, Some(*cl)), None),
            DataCall::Delete { key, scope, cl } => {
                let url = match scope {
                    DeleteScope::Partition => partition(&key.partition, *cl),
                    DeleteScope::Row => counter(key, Some(*cl)),
                    DeleteScope::Column => {
                        let mut url = counter(key, Some(*cl));
                        url.query_pairs_mut().append_pair("scope", scope.as_str());
                        url
                    }
                };
                (Method::DELETE, url, None)
            }
            DataCall::Scan { partition: p, cl } => (Method::GET, partition(p, *cl), None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_percent_encode_each_segment_and_name_the_level() {
        let key = CounterKey::new("a b", "c?d").expect("a key");
        let cl = ConsistencyLevel::All;
        let (_, u, _) = DataCall::Read { key, cl }.request("127.0.0.1:9");
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
        let cl = ConsistencyLevel::One;
        let add = DataCall::Add { key, delta: 1, cl };
        let err = client.raw(&addr, &add).await.expect_err("nothing listens");
        assert_eq!(
            err,
            CallError::NotSent {
                code: "connection_refused"
            }
        );
    }
}
