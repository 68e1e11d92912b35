"""What operators see without opening the portal: Prometheus metrics (`metrics`), OpenTelemetry
traces (`tracing`) and the `/metrics` endpoint (`endpoint`). The audit log's streaming to
external sinks lives with the ledger (`ledger.streaming`)."""
