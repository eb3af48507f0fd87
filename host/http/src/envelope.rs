//! The error envelope `{"status":<http>,"data":null,"msg":"...","code":"..."}`:
//! every error becomes one through the table in [`mediaparse_core::errors`].

use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;

/// Header carrying the credits a response cost.
pub const CREDITS_HEADER: &str = "x-credits-charged";

/// Say `X-Credits-Charged: 0` on an answer that did not say what it cost
/// (every failure, extractor rejections included).
pub async fn credits_zero_unless_set(mut response: Response) -> Response {
    if !response.headers().contains_key(CREDITS_HEADER) {
        response
            .headers_mut()
            .insert(CREDITS_HEADER, HeaderValue::from(0));
    }
    response
}

pub use mediaparse_core::ApiError;
pub use mediaparse_core::api_error::{internal, unavailable};

/// The HTTP status of an error's row.
pub fn status_of(e: &ApiError) -> StatusCode {
    StatusCode::from_u16(e.code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// Internal details go to the log, never to the caller.
/// A store failure: `database_unavailable` when the database cannot be
/// reached, otherwise an internal error.
pub fn store_failure(e: mediaparse_store::StoreError) -> ApiError {
    match e {
        mediaparse_store::StoreError::Unavailable(m) => unavailable(m),
        e => internal(e),
    }
}
