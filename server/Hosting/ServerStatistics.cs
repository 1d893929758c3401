using System.Diagnostics;

namespace Jackdaw.Server.Hosting;

/// <summary>Process-wide counters for <c>/admin/stats</c>. Updated with interlocked operations.</summary>
public sealed class ServerStatistics
{
    private long _requestsServed;
    private long _activeRequests;
    private long _errors;

    public DateTime StartedAtUtc { get; } = DateTime.UtcNow;

    public long StartTimestamp { get; } = Stopwatch.GetTimestamp();

    public long RequestsServed => Volatile.Read(ref _requestsServed);

    public long ActiveRequests => Volatile.Read(ref _activeRequests);

    public long Errors => Volatile.Read(ref _errors);

    public TimeSpan Uptime => Stopwatch.GetElapsedTime(StartTimestamp);

    public void RequestStarted() => Interlocked.Increment(ref _activeRequests);

    public void RequestFinished(bool failed)
    {
        Interlocked.Decrement(ref _activeRequests);
        Interlocked.Increment(ref _requestsServed);
        if (failed)
        {
            Interlocked.Increment(ref _errors);
        }
    }
}
