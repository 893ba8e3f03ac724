//! The routes, the OpenAPI file and the README's examples cannot drift apart: every route
//! has a handler, the OpenAPI file has exactly the routes (paths and methods), and every
//! `curl` example of the README is a route, each route with one.

use super::{handler, ROUTES};

const OPENAPI: &str = include_str!("../../openapi.yaml");
const README: &str = include_str!("../../README.md");

/// (method, path) of each operation in the OpenAPI file: the paths are the keys indented
/// two spaces under `paths:`, their methods the keys indented four.
fn openapi_routes() -> Vec<(String, String)> {
    let paths = OPENAPI
        .split("\npaths:\n")
        .nth(1)
        .expect("openapi.yaml has paths");
    let paths = paths.split("\ncomponents:").next().unwrap();
    let mut routes = Vec::new();
    let mut path = None;
    for line in paths.lines() {
        if let Some(p) = line.strip_prefix("  /") {
            path = Some(format!("/{}", p.trim_end_matches(':')));
            continue;
        }
        let Some(key) = line.strip_prefix("    ") else {
            continue;
        };
        let method = key.trim_end_matches(':').to_ascii_uppercase();
        if ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"].contains(&method.as_str()) {
            routes.push((method, path.clone().expect("a method under a path")));
        }
    }
    routes
}

/// Whether `path` (`/db/people/q`) is the route `pattern` (`/db/{name}/q`).
fn matches(pattern: &str, path: &str) -> bool {
    let (p, q): (Vec<&str>, Vec<&str>) = (pattern.split('/').collect(), path.split('/').collect());
    p.len() == q.len()
        && p.iter()
            .zip(&q)
            .all(|(p, q)| (p.starts_with('{') && !q.is_empty()) || p == q)
}

/// (method, path) of a `curl` line: `-X METHOD`, else POST with `-d`, else GET.
fn curl_route(line: &str) -> Option<(String, String)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let url = words
        .iter()
        .find(|w| w.contains(":7171/") || w.ends_with(":7171"))?;
    let path = url.split_once(":7171").map_or("", |(_, p)| p);
    let path = path.split('?').next().unwrap_or("").to_string();
    let method = match words.iter().position(|w| *w == "-X") {
        Some(i) => words.get(i + 1)?.to_string(),
        None if words.contains(&"-d") => "POST".to_string(),
        None => "GET".to_string(),
    };
    Some((method, path))
}

#[test]
fn every_route_has_a_handler_and_is_in_the_openapi_file() {
    for (method, path) in ROUTES {
        let _ = handler(method, path);
    }
    let mut documented = openapi_routes();
    let mut served: Vec<(String, String)> = ROUTES
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    documented.sort();
    served.sort();
    assert_eq!(
        documented, served,
        "openapi.yaml's operations are the routes"
    );
}

#[test]
fn every_readme_curl_example_is_a_route_and_every_route_has_one() {
    let examples: Vec<(String, String)> = README
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("curl "))
        .map(|l| curl_route(l).unwrap_or_else(|| panic!("no URL in {l}")))
        .collect();
    assert!(examples.len() >= ROUTES.len(), "{examples:?}");
    for (method, path) in &examples {
        assert!(
            ROUTES.iter().any(|(m, p)| m == method && matches(p, path)),
            "the README's `curl` {method} {path} is no route"
        );
    }
    for (method, pattern) in ROUTES {
        assert!(
            examples
                .iter()
                .any(|(m, p)| m == method && matches(pattern, p)),
            "no README example of {method} {pattern}"
        );
    }
}
