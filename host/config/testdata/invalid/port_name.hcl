listen = "127.0.0.1:http" # ERROR: Invalid listen address
