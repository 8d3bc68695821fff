// placeholder replaced by the intfire_network benchmark
int main() { return 0; }
