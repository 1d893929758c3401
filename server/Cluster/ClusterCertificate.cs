using System.Text;
using System.Text.Json;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// A registered client certificate as the cluster's state holds it: its thumbprint (upper-case
/// hex) and its definition as the JSON the certificate store keeps (<see cref="CertificateDefinition"/>:
/// the public part, the clearance and the permissions; never a private key). Compared by value,
/// so an unchanged registration is the same on every node. Each node puts it in its own store.
/// </summary>
public sealed record ClusterCertificate(string Thumbprint, string Definition)
{
    /// <summary>The registration of <paramref name="definition"/>.</summary>
    public static ClusterCertificate Of(CertificateDefinition definition)
    {
        using var buffer = new MemoryStream();
        using (var json = new Utf8JsonWriter(buffer))
        {
            definition.WriteTo(json);
        }
        return new ClusterCertificate(definition.Thumbprint.ToUpperInvariant(), Encoding.UTF8.GetString(buffer.GetBuffer(), 0, (int)buffer.Length));
    }

    /// <summary>The definition this registration holds.</summary>
    public CertificateDefinition Read()
    {
        using var json = JsonDocument.Parse(Definition);
        return CertificateDefinition.ReadFrom(json.RootElement);
    }
}
