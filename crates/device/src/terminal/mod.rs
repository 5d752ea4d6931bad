//! Placeholder until the terminal branch lands: the API the dispatcher calls.
use crate::link::Outbound;
use crate::rpc::RpcError;
use crate::settings::Settings;
use serde_json::Value;

pub struct Terminals {
    _out: Outbound,
}

impl Terminals {
    pub fn new(out: Outbound) -> Self {
        Self { _out: out }
    }
    pub async fn open(&self, _params: Value, _settings: &Settings) -> Result<Value, RpcError> {
        Err(RpcError::method_not_found("_lembas/terminal/open"))
    }
    pub async fn input(&self, _params: Value) -> Result<(), RpcError> {
        Ok(())
    }
    pub async fn resize(&self, _params: Value) -> Result<(), RpcError> {
        Ok(())
    }
    pub async fn close(&self, _params: Value) -> Result<(), RpcError> {
        Ok(())
    }
    pub fn close_all(&self) {}
    pub fn open_count(&self) -> usize {
        0
    }
}
