using System.Security.Cryptography.X509Certificates;
using System.Text.Json;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Wire;

/// <summary>
/// Certificates as RavenDB's <c>GET /admin/certificates</c> and <c>/certificates/whoami</c> write
/// them (its clients' <c>CertificateDefinition</c>):
/// <c>{"Name","Thumbprint","SecurityClearance","Permissions":{db:access},"NotAfter","NotBefore",
/// "CollectionSecondaryKeys":[],"CollectionPrimaryKey":"","PublicKeyPinningHash","Certificate"}</c>,
/// <c>Certificate</c> (base64 DER) left out for <c>metadataOnly</c>. Database names in
/// <c>Permissions</c> are written as registered (RavenDB's clients read those keys verbatim).
/// </summary>
public static class CertificateResults
{
    /// <summary>RavenDB's name for the server's own certificate in lists.</summary>
    public const string ServerCertificateName = "Server Certificate";

    /// <summary>RavenDB's name for a certificate of <c>Security:WellKnownAdminCertificates</c>.</summary>
    public const string WellKnownAdminName = "Well Known Admin Certificate";

    /// <summary>The server certificate as RavenDB lists it: ClusterNode (Jackdaw treats it as a ClusterAdmin), no permissions.</summary>
    public static CertificateDefinition ServerDefinition(X509Certificate2 server) =>
        CertificateDefinition.Of(server, ServerCertificateName, SecurityClearance.ClusterNode, permissions: null);

    /// <summary>Who <paramref name="caller"/> is, as a definition: its registration, or what RavenDB says for the server's and the well-known admin certificates.</summary>
    public static CertificateDefinition DefinitionOf(Caller caller, X509Certificate2 server) =>
        caller.Definition
        ?? (string.Equals(caller.Thumbprint, server.Thumbprint, StringComparison.OrdinalIgnoreCase)
            ? ServerDefinition(server)
            : CertificateDefinition.Of(caller.Certificate, WellKnownAdminName, SecurityClearance.ClusterAdmin, permissions: null));

    public static void Write(Utf8JsonWriter json, CertificateDefinition definition, bool metadataOnly)
    {
        json.WriteStartObject();
        json.WriteString("Name", definition.Name);
        json.WriteString("Thumbprint", definition.Thumbprint);
        json.WriteString("SecurityClearance", definition.Clearance.ToString());
        json.WriteStartObject("Permissions");
        foreach (var (database, access) in definition.Permissions.OrderBy(p => p.Key, StringComparer.OrdinalIgnoreCase))
        {
            json.WriteString(database, access.ToString());
        }
        json.WriteEndObject();
        JsonDefaults.WriteTime(json, "NotAfter", definition.NotAfter);
        JsonDefaults.WriteTime(json, "NotBefore", definition.NotBefore);
        json.WriteStartArray("CollectionSecondaryKeys");
        json.WriteEndArray();
        json.WriteString("CollectionPrimaryKey", string.Empty);
        json.WriteString("PublicKeyPinningHash", definition.PublicKeyPinningHash);
        if (!metadataOnly)
        {
            json.WriteBase64String("Certificate", definition.RawData);
        }
        json.WriteEndObject();
    }
}
