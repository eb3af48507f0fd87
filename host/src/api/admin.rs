//! The operator's admin API under `/api/v1/admin/`, guarded by its own token
//! (`MEDIAPARSE_ADMIN_TOKEN`). Off (404) when no token is configured; a
//! customer token never opens it.

use axum::http::{HeaderMap, StatusCode, header};
use sha2::{Digest, Sha256};

use super::envelope::ApiError;
use crate::state::AppState;

/// Check the operator token; compare digests so timing says nothing.
pub fn require_operator(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(expected) = state.admin_token.as_deref() else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "the admin API is not enabled",
        ));
    };
    let raw = headers
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or("invalid"));
    let token = crate::auth::bearer(raw)?;
    if Sha256::digest(token.as_bytes()) != Sha256::digest(expected.as_bytes()) {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "invalid_token",
            "Unauthorized: not the operator token",
        ));
    }
    Ok(())
}
