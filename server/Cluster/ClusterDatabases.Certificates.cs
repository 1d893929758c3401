using System.Collections.Immutable;

namespace Jackdaw.Server.Cluster;

// The registered certificates of the state, put in this node's certificate store (the Authorizer
// reads that store alone): a registration new or changed since the acted state is put, one gone
// since is deleted. A certificate registered here before the node joined, and never in the state,
// stays.
internal sealed partial class ClusterDatabases
{
    /// <param name="all">Check every registration against the store (the first state after a start), not only those that changed.</param>
    private void ApplyCertificates(ImmutableSortedDictionary<string, ClusterCertificate> before, ImmutableSortedDictionary<string, ClusterCertificate> after, bool all)
    {
        if (ReferenceEquals(before, after) && !all || _node.LocalCertificates is not { } store)
        {
            return;
        }
        foreach (var (thumbprint, certificate) in after)
        {
            if (before.TryGetValue(thumbprint, out var was) && was == certificate && !all
                || store.Get(thumbprint) is { } stored && ClusterCertificate.Of(stored) == certificate)
            {
                continue;
            }
            store.Put(certificate.Read());
            LogCertificatePut(_logger, thumbprint);
        }
        foreach (var thumbprint in before.Keys)
        {
            if (!after.ContainsKey(thumbprint) && store.Delete(thumbprint))
            {
                LogCertificateDeleted(_logger, thumbprint);
            }
        }
    }

    [LoggerMessage(EventId = 757, Level = LogLevel.Information, Message = "Certificate {Thumbprint} registered on this node, as the cluster's state says")]
    private static partial void LogCertificatePut(ILogger logger, string thumbprint);

    [LoggerMessage(EventId = 758, Level = LogLevel.Information, Message = "Certificate {Thumbprint} deleted from this node, as the cluster's state says")]
    private static partial void LogCertificateDeleted(ILogger logger, string thumbprint);
}
