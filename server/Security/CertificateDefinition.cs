using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;

namespace Jackdaw.Server.Security;

/// <summary>
/// A client certificate the server knows: its public part, its clearance and, for a
/// <see cref="SecurityClearance.ValidUser"/>, its access per database (names compared ignoring
/// case, as database names are). Immutable: an edit stores a new one.
/// </summary>
public sealed record CertificateDefinition
{
    public required string Name { get; init; }

    /// <summary>The SHA-1 thumbprint, upper-case hex, as .NET and RavenDB write it.</summary>
    public required string Thumbprint { get; init; }

    /// <summary>The certificate, DER (its public part only).</summary>
    public required byte[] RawData { get; init; }

    public required SecurityClearance Clearance { get; init; }

    public required IReadOnlyDictionary<string, DatabaseAccess> Permissions { get; init; }

    /// <summary>Base64 of the SHA-256 of the SubjectPublicKeyInfo: a renewed certificate with the same key has the same.</summary>
    public required string PublicKeyPinningHash { get; init; }

    public required string Issuer { get; init; }

    public required DateTime NotBefore { get; init; }

    public required DateTime NotAfter { get; init; }

    /// <summary>A definition of <paramref name="certificate"/>'s public part.</summary>
    public static CertificateDefinition Of(X509Certificate2 certificate, string name, SecurityClearance clearance, IReadOnlyDictionary<string, DatabaseAccess>? permissions) => new()
    {
        Name = name,
        Thumbprint = certificate.Thumbprint,
        RawData = certificate.RawData,
        Clearance = clearance,
        Permissions = new Dictionary<string, DatabaseAccess>(permissions ?? new Dictionary<string, DatabaseAccess>(), StringComparer.OrdinalIgnoreCase),
        PublicKeyPinningHash = PinningHash(certificate),
        Issuer = certificate.Issuer,
        NotBefore = certificate.NotBefore.ToUniversalTime(),
        NotAfter = certificate.NotAfter.ToUniversalTime(),
    };

    public static string PinningHash(X509Certificate2 certificate) =>
        Convert.ToBase64String(SHA256.HashData(certificate.PublicKey.ExportSubjectPublicKeyInfo()));

    /// <summary>The access this certificate has to <paramref name="database"/>, or null.</summary>
    public DatabaseAccess? AccessTo(ReadOnlySpan<char> database)
    {
        if (Permissions.Count == 0)
        {
            return null;
        }
        // Few entries each: a scan costs less than a string for the lookup.
        foreach (var (name, access) in Permissions)
        {
            if (database.Equals(name, StringComparison.OrdinalIgnoreCase))
            {
                return access;
            }
        }
        return null;
    }

    internal void WriteTo(Utf8JsonWriter json)
    {
        json.WriteStartObject();
        json.WriteString("Name", Name);
        json.WriteString("Thumbprint", Thumbprint);
        json.WriteBase64String("Certificate", RawData);
        json.WriteString("SecurityClearance", Clearance.ToString());
        json.WriteStartObject("Permissions");
        foreach (var (database, access) in Permissions.OrderBy(p => p.Key, StringComparer.OrdinalIgnoreCase))
        {
            json.WriteString(database, access.ToString());
        }
        json.WriteEndObject();
        json.WriteString("PublicKeyPinningHash", PublicKeyPinningHash);
        json.WriteString("Issuer", Issuer);
        json.WriteString("NotBefore", NotBefore);
        json.WriteString("NotAfter", NotAfter);
        json.WriteEndObject();
    }

    internal static CertificateDefinition ReadFrom(JsonElement json)
    {
        var permissions = new Dictionary<string, DatabaseAccess>(StringComparer.OrdinalIgnoreCase);
        foreach (var property in json.GetProperty("Permissions").EnumerateObject())
        {
            permissions[property.Name] = Enum.Parse<DatabaseAccess>(property.Value.GetString()!);
        }
        return new CertificateDefinition
        {
            Name = json.GetProperty("Name").GetString()!,
            Thumbprint = json.GetProperty("Thumbprint").GetString()!,
            RawData = json.GetProperty("Certificate").GetBytesFromBase64(),
            Clearance = Enum.Parse<SecurityClearance>(json.GetProperty("SecurityClearance").GetString()!),
            Permissions = permissions,
            PublicKeyPinningHash = json.GetProperty("PublicKeyPinningHash").GetString()!,
            Issuer = json.GetProperty("Issuer").GetString()!,
            NotBefore = json.GetProperty("NotBefore").GetDateTime().ToUniversalTime(),
            NotAfter = json.GetProperty("NotAfter").GetDateTime().ToUniversalTime(),
        };
    }
}
