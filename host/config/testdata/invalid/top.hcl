listen    = "localhost" # ERROR: Invalid listen address
log_level = "verbose"   # ERROR: Invalid log level
data_dir  = ""          # ERROR: Empty path
