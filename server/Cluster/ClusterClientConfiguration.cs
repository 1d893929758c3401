namespace Jackdaw.Server.Cluster;

/// <summary>
/// RavenDB's client configuration as a server keeps it (<c>{"Disabled","ReadBalanceBehavior",
/// "MaxNumberOfRequestsPerSession",...}</c>, the JSON) and the version that set it: the log index
/// in a cluster, a counter on a lone server. Clients holding an older version are told to fetch it
/// again (<c>Refresh-Client-Configuration</c>).
/// </summary>
public sealed record ClusterClientConfiguration(string Json, long Etag);
