using System.Globalization;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Wire;

/// <summary>
/// The body of the certificate routes: RavenDB's <c>CertificateDefinition</c> as its clients send
/// it (<c>{"Name","Certificate","SecurityClearance","Permissions":{"db":"Read|ReadWrite|Admin"},
/// "Password","Thumbprint","NotAfter","TwoFactorAuthenticationKey"}</c>). Each route takes the
/// fields it needs; every field present is checked here, and a wrong one is a 400 naming it.
/// Property names compare ignoring case; a JSON null is an absent field; others are ignored.
/// </summary>
public sealed record CertificateRequestBody
{
    public string? Name { get; init; }

    /// <summary>Base64 (of DER, or of a PFX for <c>replace-cluster-cert</c>) or PEM text.</summary>
    public string? Certificate { get; init; }

    public string? Password { get; init; }

    public string? Thumbprint { get; init; }

    public SecurityClearance? Clearance { get; init; }

    /// <summary>Database names (valid, each once in any casing) to their access.</summary>
    public IReadOnlyDictionary<string, DatabaseAccess>? Permissions { get; init; }

    public DateTime? NotAfter { get; init; }

    public string? TwoFactorAuthenticationKey { get; init; }

    public static CertificateRequestBody Parse(JsonDocument? body, string example)
    {
        if (body is null || body.RootElement.ValueKind != JsonValueKind.Object)
        {
            throw new BadRequestException("The body must be a JSON object: " + example);
        }
        var parsed = new CertificateRequestBody();
        foreach (var property in body.RootElement.EnumerateObject())
        {
            var value = property.Value;
            parsed = property.Name.ToUpperInvariant() switch
            {
                "NAME" => parsed with { Name = String(value, "Name") },
                "CERTIFICATE" => parsed with { Certificate = String(value, "Certificate") },
                "PASSWORD" => parsed with { Password = String(value, "Password") },
                "THUMBPRINT" => parsed with { Thumbprint = String(value, "Thumbprint")?.Trim().ToUpperInvariant() },
                "SECURITYCLEARANCE" => parsed with { Clearance = String(value, "SecurityClearance") is { } clearance ? ParseClearance(clearance) : null },
                "PERMISSIONS" => parsed with { Permissions = ParsePermissions(value) },
                "NOTAFTER" => parsed with { NotAfter = String(value, "NotAfter") is { } date ? ParseDate(date) : null },
                "TWOFACTORAUTHENTICATIONKEY" => parsed with { TwoFactorAuthenticationKey = String(value, "TwoFactorAuthenticationKey") },
                _ => parsed,
            };
        }
        return parsed;
    }

    /// <summary>The name, trimmed; a 400 when it is missing or blank.</summary>
    public string RequireName(string example) =>
        string.IsNullOrWhiteSpace(Name) ? throw new BadRequestException("\"Name\" is required: the certificate's name, as " + example) : Name.Trim();

    /// <summary>
    /// The public certificate in <see cref="Certificate"/>: base64 of its DER (what RavenDB's clients
    /// send) or PEM text (or base64 of it). A private key, a PFX, several certificates or anything
    /// unparseable is a 400 naming it.
    /// </summary>
    public X509Certificate2 ReadPublicCertificate()
    {
        var text = Certificate?.Trim();
        if (string.IsNullOrEmpty(text))
        {
            throw new BadRequestException("\"Certificate\" is required: the client certificate's public part, as base64 of its DER (RavenDB's clients send that) or as PEM (-----BEGIN CERTIFICATE-----).");
        }
        if (text.StartsWith("-----BEGIN", StringComparison.Ordinal))
        {
            return FromPem(text);
        }
        byte[] bytes;
        try
        {
            bytes = Convert.FromBase64String(text);
        }
        catch (FormatException)
        {
            throw new BadRequestException("\"Certificate\" is neither PEM (-----BEGIN CERTIFICATE-----) nor base64: send the client certificate's public part as base64 of its DER, or as PEM.");
        }
        if (bytes.AsSpan().StartsWith("-----BEGIN"u8))
        {
            return FromPem(Encoding.ASCII.GetString(bytes));
        }
        try
        {
            return X509CertificateLoader.LoadCertificate(bytes);
        }
        catch (CryptographicException e)
        {
            if (IsPkcs12(bytes))
            {
                throw new BadRequestException("\"Certificate\" is a PFX (PKCS#12), which may carry a private key; a private key never leaves its client: send the certificate's public part only, as base64 of its DER or as PEM.", e);
            }
            throw new BadRequestException($"\"Certificate\" is base64 but not a certificate ({e.Message.TrimEnd('.')}): send the client certificate's public part as base64 of its DER, or as PEM.", e);
        }
    }

    private static bool IsPkcs12(byte[] bytes)
    {
        try
        {
            return X509Certificate2.GetCertContentType(bytes) == X509ContentType.Pkcs12;
        }
        catch (CryptographicException)
        {
            return false;
        }
    }

    private static X509Certificate2 FromPem(string text)
    {
        var certificates = new List<string>();
        var rest = text.AsSpan();
        while (PemEncoding.TryFind(rest, out var fields))
        {
            var label = rest[fields.Label];
            if (label.EndsWith("PRIVATE KEY", StringComparison.Ordinal))
            {
                throw new BadRequestException($"\"Certificate\" holds a private key ({label}); a private key never leaves its client: send the certificate's public part only.");
            }
            if (label.SequenceEqual("CERTIFICATE"))
            {
                certificates.Add(rest[fields.Location].ToString());
            }
            rest = rest[fields.Location.End..];
        }
        if (certificates.Count != 1)
        {
            throw new BadRequestException(certificates.Count == 0
                ? "\"Certificate\" is PEM without a -----BEGIN CERTIFICATE----- block that parses: send the client certificate's public part."
                : $"\"Certificate\" holds {certificates.Count} certificates: register one certificate at a time.");
        }
        try
        {
            return X509Certificate2.CreateFromPem(certificates[0]);
        }
        catch (CryptographicException e)
        {
            throw new BadRequestException($"\"Certificate\" has a CERTIFICATE block that is not a certificate ({e.Message.TrimEnd('.')}).", e);
        }
    }

    private static string? String(JsonElement value, string field) => value.ValueKind switch
    {
        JsonValueKind.String => value.GetString(),
        JsonValueKind.Null => null,
        _ => throw new BadRequestException($"\"{field}\" must be a string, not {value.ValueKind}."),
    };

    private static SecurityClearance ParseClearance(string value)
    {
        foreach (var granted in (ReadOnlySpan<SecurityClearance>)[SecurityClearance.ClusterAdmin, SecurityClearance.Operator, SecurityClearance.ValidUser])
        {
            if (value.Equals(granted.ToString(), StringComparison.OrdinalIgnoreCase))
            {
                return granted;
            }
        }
        if (value.Equals(nameof(SecurityClearance.ClusterNode), StringComparison.OrdinalIgnoreCase))
        {
            throw new BadRequestException("\"SecurityClearance\" is ClusterNode, which Jackdaw never grants (it has no cluster): use ClusterAdmin.");
        }
        throw new BadRequestException($"\"SecurityClearance\" is '{value}': it is ClusterAdmin, Operator or ValidUser.");
    }

    private static Dictionary<string, DatabaseAccess>? ParsePermissions(JsonElement value)
    {
        if (value.ValueKind == JsonValueKind.Null)
        {
            return null;
        }
        if (value.ValueKind != JsonValueKind.Object)
        {
            throw new BadRequestException($"\"Permissions\" must be an object of database names to Read, ReadWrite or Admin, as {{\"Northwind\":\"ReadWrite\"}}, not {value.ValueKind}.");
        }
        var permissions = new Dictionary<string, DatabaseAccess>(StringComparer.OrdinalIgnoreCase);
        foreach (var entry in value.EnumerateObject())
        {
            if (DatabaseNames.Validate(entry.Name) is { } problem)
            {
                throw new BadRequestException($"\"Permissions\" names a database that cannot exist: {problem}");
            }
            var access = entry.Value.ValueKind == JsonValueKind.String ? entry.Value.GetString() : entry.Value.ToString();
            if (!TryParseAccess(access, out var parsed))
            {
                throw new BadRequestException($"\"Permissions\" gives database '{entry.Name}' the access '{access}': it is Read, ReadWrite or Admin.");
            }
            if (!permissions.TryAdd(entry.Name, parsed))
            {
                throw new BadRequestException($"\"Permissions\" names database '{entry.Name}' more than once (names are compared ignoring case).");
            }
        }
        return permissions;
    }

    private static bool TryParseAccess(string? value, out DatabaseAccess access)
    {
        foreach (var known in (ReadOnlySpan<DatabaseAccess>)[DatabaseAccess.Read, DatabaseAccess.ReadWrite, DatabaseAccess.Admin])
        {
            if (string.Equals(value, known.ToString(), StringComparison.OrdinalIgnoreCase))
            {
                access = known;
                return true;
            }
        }
        access = default;
        return false;
    }

    private static DateTime ParseDate(string value) =>
        DateTime.TryParse(value, CultureInfo.InvariantCulture, DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal, out var date)
            ? date
            : throw new BadRequestException($"\"NotAfter\" is '{value}', which is not a date: give it as 2031-12-31 or 2031-12-31T00:00:00Z.");
}
