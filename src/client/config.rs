//! Client settings: the bootstrap list from `--bootstrap-server` and the client properties
//! Cohort's tools honour from a `--command-config` file (Java `.properties` syntax), security
//! ones included (`auth`). Keys the client does not use are reported once and otherwise
//! ignored, as Kafka's clients do.

use std::collections::BTreeMap;
use std::time::Duration;

use super::auth::ClientSecurity;
use super::error::{ClientError, ClientResult};

/// Longest properties file we read; anything bigger is not a client config.
const PROPERTIES_BYTES_MAX: u64 = 1024 * 1024;
/// Most bootstrap addresses we accept.
const BOOTSTRAP_SERVERS_MAX: usize = 256;

/// Keys the client understands. Everything else is reported as unused.
const KNOWN_KEYS: &[&str] = &[
    "bootstrap.servers",
    "client.id",
    "request.timeout.ms",
    "default.api.timeout.ms",
    "retry.backoff.ms",
    "retry.backoff.max.ms",
];

/// Settings of one client.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `host:port` addresses to bootstrap from, in the order given.
    pub bootstrap_servers: Vec<String>,
    /// Sent in every request header; brokers log it and show it in group descriptions.
    pub client_id: String,
    /// Upper bound on waiting for one response (Kafka's `request.timeout.ms`, Admin default 30 s).
    pub request_timeout: Duration,
    /// Deadline of one Admin call; `--timeout` overrides it (Kafka's `default.api.timeout.ms`).
    pub api_timeout: Duration,
    /// First pause between retries; doubles up to `retry_backoff_max`.
    pub retry_backoff: Duration,
    /// Longest pause between retries.
    pub retry_backoff_max: Duration,
    /// `security.protocol` and the SASL and TLS settings it needs.
    pub security: ClientSecurity,
}

impl ClientConfig {
    /// Defaults with the given bootstrap list (`h:p[,h:p]`).
    pub fn new(bootstrap: &str) -> ClientResult<Self> {
        Ok(ClientConfig {
            bootstrap_servers: parse_bootstrap(bootstrap)?,
            client_id: "cohort-admin".to_string(),
            request_timeout: Duration::from_millis(30_000),
            api_timeout: Duration::from_millis(60_000),
            retry_backoff: Duration::from_millis(100),
            retry_backoff_max: Duration::from_millis(1_000),
            security: ClientSecurity::default(),
        })
    }

    /// A command-line tool's client: `bootstrap`, then the properties of its `--command-config`
    /// file over `defaults` (such as the tool's own `client.id`). Also returns the keys it did
    /// not use, for the tool's warning.
    pub fn for_tool(
        bootstrap: &str,
        command_config: Option<&str>,
        defaults: &[(&str, &str)],
    ) -> ClientResult<(Self, Vec<String>)> {
        let mut config = Self::new(bootstrap)?;
        let mut props = match command_config {
            Some(path) => read_properties_file(path)?,
            None => BTreeMap::new(),
        };
        for (key, value) in defaults {
            props
                .entry((*key).to_string())
                .or_insert_with(|| (*value).to_string());
        }
        let unused = config.apply_properties(&props)?;
        Ok((config, unused))
    }

    /// Applies client properties (from `--command-config`). Returns the keys it did not use, in
    /// sorted order, so the caller can warn about them as Kafka does.
    pub fn apply_properties(
        &mut self,
        props: &BTreeMap<String, String>,
    ) -> ClientResult<Vec<String>> {
        let security = ClientSecurity::from_properties(props)?;
        let mut unused = Vec::new();
        for (key, value) in props {
            if security.uses(key) {
                continue;
            }
            match key.as_str() {
                "client.id" => self.client_id = value.clone(),
                "request.timeout.ms" => self.request_timeout = parse_ms(key, value)?,
                "default.api.timeout.ms" => self.api_timeout = parse_ms(key, value)?,
                "retry.backoff.ms" => self.retry_backoff = parse_ms(key, value)?,
                "retry.backoff.max.ms" => self.retry_backoff_max = parse_ms(key, value)?,
                // The command line's --bootstrap-server wins, as in Kafka's tools.
                "bootstrap.servers" => {}
                _ => unused.push(key.clone()),
            }
        }
        debug_assert!(unused.iter().all(|k| !KNOWN_KEYS.contains(&k.as_str())));
        self.security = security;
        Ok(unused)
    }
}

fn parse_ms(key: &str, value: &str) -> ClientResult<Duration> {
    value
        .trim()
        .parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| {
            ClientError::Config(format!(
                "Invalid value {value} for configuration {key}: Not a number of type LONG"
            ))
        })
}

/// Splits and checks a bootstrap list: `host:port` entries separated by commas, IPv6 hosts in
/// brackets. Messages follow Kafka's `ClientUtils.parseAndValidateAddresses`.
pub fn parse_bootstrap(list: &str) -> ClientResult<Vec<String>> {
    let mut out = Vec::new();
    for raw in list.split(',') {
        let entry = raw.trim();
        if entry.is_empty() {
            continue;
        }
        let (host, port) = split_host_port(entry).ok_or_else(|| {
            ClientError::Config(format!("Invalid url in bootstrap.servers: {entry}"))
        })?;
        if host.is_empty() || port == 0 {
            return Err(ClientError::Config(format!(
                "Invalid url in bootstrap.servers: {entry}"
            )));
        }
        out.push(entry.to_string());
        if out.len() > BOOTSTRAP_SERVERS_MAX {
            return Err(ClientError::Config(format!(
                "more than {BOOTSTRAP_SERVERS_MAX} bootstrap servers"
            )));
        }
    }
    if out.is_empty() {
        return Err(ClientError::Config(
            "No resolvable bootstrap urls given in bootstrap.servers".to_string(),
        ));
    }
    Ok(out)
}

fn split_host_port(entry: &str) -> Option<(&str, u16)> {
    let (host, port) = if let Some(rest) = entry.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        (host, after.strip_prefix(':')?)
    } else {
        entry.rsplit_once(':')?
    };
    Some((host, port.parse().ok()?))
}

/// Reads a Java `.properties` file (the format of Kafka's `--command-config`).
pub fn read_properties_file(path: &str) -> ClientResult<BTreeMap<String, String>> {
    use std::io::Read;
    let file =
        std::fs::File::open(path).map_err(|e| ClientError::Config(format!("{path} ({e})")))?;
    let mut text = String::new();
    file.take(PROPERTIES_BYTES_MAX + 1)
        .read_to_string(&mut text)
        .map_err(|e| ClientError::Config(format!("{path} ({e})")))?;
    if text.len() as u64 > PROPERTIES_BYTES_MAX {
        return Err(ClientError::Config(format!(
            "{path} is larger than {PROPERTIES_BYTES_MAX} bytes"
        )));
    }
    Ok(parse_properties(&text))
}

/// Parses Java `.properties` text: `#`/`!` comments, `key=value`, `key: value` or `key value`,
/// backslash line continuations and escapes. Later keys override earlier ones.
pub fn parse_properties(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut logical = String::new();
    let mut continuing = false;
    for line in text.lines() {
        let piece = if continuing {
            line.trim_start()
        } else {
            let t = line.trim_start();
            if t.is_empty() || t.starts_with('#') || t.starts_with('!') {
                continue;
            }
            t
        };
        // An odd number of trailing backslashes continues the line.
        let trailing = piece.chars().rev().take_while(|c| *c == '\\').count();
        if trailing % 2 == 1 {
            logical.push_str(&piece[..piece.len() - 1]);
            continuing = true;
            continue;
        }
        logical.push_str(piece);
        continuing = false;
        let (k, v) = split_property(&logical);
        out.insert(k, v);
        logical.clear();
    }
    if !logical.is_empty() {
        let (k, v) = split_property(&logical);
        out.insert(k, v);
    }
    out
}

fn split_property(line: &str) -> (String, String) {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    let mut key_end = chars.len();
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '=' | ':' | ' ' | '\t' | '\x0c' => {
                key_end = i;
                break;
            }
            _ => i += 1,
        }
    }
    let key: String = chars[..key_end.min(chars.len())].iter().collect();
    let mut j = key_end;
    while j < chars.len() && matches!(chars[j], ' ' | '\t' | '\x0c') {
        j += 1;
    }
    if j < chars.len() && matches!(chars[j], '=' | ':') {
        j += 1;
    }
    while j < chars.len() && matches!(chars[j], ' ' | '\t' | '\x0c') {
        j += 1;
    }
    let value: String = chars[j.min(chars.len())..].iter().collect();
    (unescape(&key), unescape(&value))
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\x0c'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => out.push_str(&hex),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_lists_split_and_trim() {
        assert_eq!(
            parse_bootstrap(" a:1 ,b:2,[::1]:3").unwrap(),
            vec!["a:1", "b:2", "[::1]:3"]
        );
    }

    #[test]
    fn bad_bootstrap_entries_are_rejected_with_kafkas_words() {
        let e = parse_bootstrap("localhost").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid configuration: Invalid url in bootstrap.servers: localhost"
        );
        assert!(parse_bootstrap("h:0").is_err());
        assert!(parse_bootstrap("h:99999").is_err());
        assert!(parse_bootstrap(" , ").is_err());
    }

    #[test]
    fn properties_follow_java_syntax() {
        let text = "# comment\n! also\nclient.id = ops\nrequest.timeout.ms:1500\nkey\\ with\\ space value\nlong = a\\\n    b\nunicode=\\u0041\n";
        let p = parse_properties(text);
        assert_eq!(p.get("client.id").map(String::as_str), Some("ops"));
        assert_eq!(
            p.get("request.timeout.ms").map(String::as_str),
            Some("1500")
        );
        assert_eq!(p.get("key with space").map(String::as_str), Some("value"));
        assert_eq!(p.get("long").map(String::as_str), Some("ab"));
        assert_eq!(p.get("unicode").map(String::as_str), Some("A"));
        assert_eq!(p.len(), 5);
    }

    #[test]
    fn properties_apply_and_report_unused_keys() {
        let mut c = ClientConfig::new("h:1").unwrap();
        let props = parse_properties(
            "client.id=ops\nrequest.timeout.ms=1500\nsasl.mechanism=PLAIN\nfoo=bar\n",
        );
        let unused = c.apply_properties(&props).unwrap();
        assert_eq!(c.client_id, "ops");
        assert_eq!(c.request_timeout, Duration::from_millis(1500));
        assert_eq!(
            unused,
            vec!["foo".to_string(), "sasl.mechanism".to_string()]
        );
        let props = parse_properties(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=\
             org.apache.kafka.common.security.plain.PlainLoginModule required username=u \
             password=p;\nssl.truststore.type=PEM\n",
        );
        let unused = c.apply_properties(&props).unwrap();
        assert_eq!(unused, vec!["ssl.truststore.type".to_string()]);
        assert_eq!(
            c.security.sasl.as_ref().map(|l| l.username.as_str()),
            Some("u")
        );
    }

    #[test]
    fn bad_property_values_are_errors() {
        let mut c = ClientConfig::new("h:1").unwrap();
        let props = parse_properties("request.timeout.ms=soon\n");
        assert!(c.apply_properties(&props).is_err());
        let props = parse_properties("security.protocol=SASL_SSL\n");
        assert!(c.apply_properties(&props).is_err());
        let props = parse_properties("security.protocol=TLS\n");
        assert!(c.apply_properties(&props).is_err());
    }
}
