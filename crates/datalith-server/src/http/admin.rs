//! Creating and deleting databases: `POST /dbs {:name "x"}` and `DELETE /db/x`, for the
//! admin role on that database (or on `*`), when the server was started with
//! `--create-in` (see `served`). Both block on the file system and on the database's
//! opening or closing, so they run on a blocking thread.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::HeaderMap;
use axum::response::Response;
use datalith::edn::Edn;

use super::respond::{self, header};
use super::{body, pipeline, Shared};
use crate::auth::Role;
use crate::error::{codes, Result, ServerError};
use crate::format::negotiate::read_body;
use crate::ops::Request;

/// `POST /dbs`: `{:database "x", :created true}` (false: its directory was there, and is
/// served again).
pub async fn create(State(state): State<Shared>, headers: HeaderMap, body: Body) -> Response {
    let outcome = create_database(&state, &headers, body).await;
    respond::answer(&headers, outcome)
}

/// `DELETE /db/NAME`: `{:database "x", :deleted true}`.
pub async fn delete(
    State(state): State<Shared>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    let outcome = delete_database(&state, &name, &headers).await;
    respond::answer(&headers, outcome)
}

async fn create_database(state: &Shared, headers: &HeaderMap, body: Body) -> Result<Edn> {
    let access = pipeline::authenticate(state, headers)?;
    let bytes = body::read(state, body).await?;
    let form = read_body(header(headers, CONTENT_TYPE), &bytes)?;
    let request = Request::new(form, &["name"])?;
    let name = match request.required("name")? {
        Edn::String(name) => name.clone(),
        other => {
            return Err(ServerError::invalid(format!(
                ":name must be a string, got {other}"
            )))
        }
    };
    access.require(&name, Role::Admin)?;
    let (served, n) = (state.clone(), name.clone());
    let created = blocking(move || served.served.create(&n)).await?;
    Ok(Edn::Map(vec![
        (Edn::kw(":database"), Edn::String(name)),
        (Edn::kw(":created"), Edn::Bool(created)),
    ]))
}

async fn delete_database(state: &Shared, name: &str, headers: &HeaderMap) -> Result<Edn> {
    let access = pipeline::authenticate(state, headers)?;
    access.require(name, Role::Admin)?;
    let (served, n) = (state.clone(), name.to_string());
    blocking(move || served.served.delete(&n)).await?;
    Ok(Edn::Map(vec![
        (Edn::kw(":database"), Edn::String(name.to_string())),
        (Edn::kw(":deleted"), Edn::Bool(true)),
    ]))
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(ServerError::new(
            codes::INTERNAL,
            format!("the request failed inside the server: {e}"),
        ))
    })
}
