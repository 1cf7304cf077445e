listen    = "localhost" # ERROR: Invalid listen address
log_level = "verbose"   # ERROR: Invalid log level
data_dir  = ""          # ERROR: Empty path
app_compact_after         = "10s" # ERROR: Invalid app_compact_after
app_compact_session_bytes = -5    # ERROR: Invalid app_compact_session_bytes
watch_config = "often"            # ERROR: Incorrect attribute value type
