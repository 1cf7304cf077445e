listen = "127.0.0.1:99999" # ERROR: Invalid listen address
