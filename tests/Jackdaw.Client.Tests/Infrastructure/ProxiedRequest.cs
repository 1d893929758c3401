namespace Jackdaw.Client.Tests.Infrastructure;

/// <summary>A request a <see cref="NodeProxy"/> received, with the etags the client sent.</summary>
public sealed record ProxiedRequest(string Method, string PathAndQuery, string TopologyEtag, string ClientConfigurationEtag);
