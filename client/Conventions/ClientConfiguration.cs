namespace Jackdaw.Client;

/// <summary>
/// The client settings a server may hold for a database (RavenDB's <c>ClientConfiguration</c>, as
/// <c>GET /databases/{db}/configuration/client</c> answers it: <c>{"Etag","Configuration":{...}}</c>).
/// The store asks for it when an answer carries <c>Refresh-Client-Configuration: true</c>; while it
/// is not <see cref="Disabled"/>, its <see cref="ReadBalanceBehavior"/>, when set, overrides the
/// conventions' for that database. RavenDB's other fields (the maximum number of requests per
/// session, the load balance behaviour, the identity parts separator) are not read.
/// </summary>
public sealed class ClientConfiguration
{
    /// <summary>The configuration's version: the store sends it back in <c>Client-Configuration-Etag</c>.</summary>
    public long Etag { get; init; }

    /// <summary>The configuration is off: the conventions decide.</summary>
    public bool Disabled { get; init; }

    public ReadBalanceBehavior? ReadBalanceBehavior { get; init; }
}
