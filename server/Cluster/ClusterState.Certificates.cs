using System.Collections.Immutable;

namespace Jackdaw.Server.Cluster;

// The registered client certificates: put (one or many, replacing those of the same thumbprints)
// and delete by thumbprint, decided alike on every node from the command alone.
public sealed partial class ClusterState
{
    private static (ImmutableSortedDictionary<string, ClusterCertificate> Certificates, string? Refused) ApplyCertificates(
        ClusterCommand command, ImmutableSortedDictionary<string, ClusterCertificate> certificates)
    {
        if (command.Kind == ClusterCommandKind.DeleteCertificate)
        {
            if (command.Thumbprint is not { Length: > 0 } thumbprint)
            {
                return (certificates, "The delete of a certificate carries no thumbprint.");
            }
            if (!certificates.ContainsKey(thumbprint))
            {
                return (certificates, $"No certificate with thumbprint {thumbprint} is registered.");
            }
            return (certificates.Remove(thumbprint), null);
        }
        if (command.Certificates is not { Count: > 0 } puts)
        {
            return (certificates, "The put of certificates carries none.");
        }
        foreach (var certificate in puts)
        {
            if (certificate.Thumbprint is not { Length: > 0 } || certificate.Definition is not { Length: > 0 })
            {
                return (certificates, "A certificate put carries no thumbprint or no definition.");
            }
        }
        foreach (var certificate in puts)
        {
            var key = certificate.Thumbprint.ToUpperInvariant();
            // The same registration again keeps the same object (nothing to apply on the nodes).
            if (!certificates.TryGetValue(key, out var existing) || existing != certificate)
            {
                certificates = certificates.SetItem(key, certificate with { Thumbprint = key });
            }
        }
        return (certificates, null);
    }
}
