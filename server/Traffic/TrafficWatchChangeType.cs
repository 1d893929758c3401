namespace Jackdaw.Server.Traffic;

/// <summary>
/// What a request was about, RavenDB's <c>TrafficWatchChangeType</c> (its names, so that tools
/// reading RavenDB's traffic watch read ours), told from the route: <see cref="TrafficWatch.TypeOf"/>.
/// </summary>
public enum TrafficWatchChangeType
{
    None,
    Queries,
    Operations,
    MultiGet,
    BulkDocs,
    Index,
    Counters,
    Hilo,
    Subscriptions,
    Streams,
    Documents,
    TimeSeries,
}
