/// <summary>One side's timed run: queries per second, latency percentiles (ms) of the queries that succeeded, orders per answer, failed queries and the first failure.</summary>
internal readonly record struct RunResult(double PerSecond, double P50, double P99, double OrdersPerQuery, int Errors, string? FirstError);
