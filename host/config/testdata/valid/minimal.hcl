server "revenue" {
  command = executable()
  args    = ["demo", "revenue"]
}
