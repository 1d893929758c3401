namespace Jackdaw.Server.Security;

/// <summary>
/// The <c>Security</c> section of the configuration (RavenDB's <c>Security.*</c> settings, with
/// ':' for '.': <c>--Security:Certificate:Path</c>, <c>JACKDAW_SECURITY__CERTIFICATE__PATH</c>).
/// With a certificate the server is secured: HTTPS only, and every request identified by a client
/// certificate.
/// </summary>
public sealed record SecurityOptions
{
    /// <summary>14 days, as the issue and RavenDB's own warning.</summary>
    public static readonly TimeSpan DefaultExpiryWarning = TimeSpan.FromDays(14);

    /// <summary>The server certificate: a PFX, or a PEM certificate (with its key, or with <see cref="CertificateKeyPath"/>). Null: unsecured.</summary>
    public string? CertificatePath { get; init; }

    /// <summary>A PEM private key, when not in the certificate's file.</summary>
    public string? CertificateKeyPath { get; init; }

    /// <summary>The PFX's password.</summary>
    public string? CertificatePassword { get; init; }

    /// <summary>True when unsecured access from any address is allowed (<c>Security:UnsecuredAccessAllowed=PublicNetwork</c>); otherwise an unsecured server listens on loopback only.</summary>
    public bool UnsecuredPublicNetworkAllowed { get; init; }

    /// <summary>Thumbprints that are ClusterAdmin without being registered (to bootstrap a secured server).</summary>
    public IReadOnlyList<string> WellKnownAdminCertificates { get; init; } = [];

    /// <summary>How long before the server certificate expires it is logged as a warning.</summary>
    public TimeSpan ExpiryWarning { get; init; } = DefaultExpiryWarning;

    public bool IsSecured => CertificatePath is not null;

    public static SecurityOptions FromConfiguration(IConfigurationSection section)
    {
        var unsecured = section["UnsecuredAccessAllowed"];
        var publicNetwork = unsecured switch
        {
            null or "" or "None" or "Local" => false,
            "PublicNetwork" => true,
            _ => throw new InvalidOperationException($"Security:UnsecuredAccessAllowed '{unsecured}' is not Local or PublicNetwork; set it with --Security:UnsecuredAccessAllowed=PublicNetwork (to serve other machines without HTTPS) or JACKDAW_SECURITY__UNSECUREDACCESSALLOWED."),
        };
        var path = NonEmpty(section["Certificate:Path"]);
        var keyPath = NonEmpty(section["Certificate:KeyPath"]);
        if (keyPath is not null && path is null)
        {
            throw new InvalidOperationException("Security:Certificate:KeyPath is set but Security:Certificate:Path is not: give the certificate's file with --Security:Certificate:Path.");
        }
        var thumbprints = (section["WellKnownAdminCertificates"] ?? string.Empty)
            .Split([',', ';', ' '], StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Select(t => t.ToUpperInvariant())
            .ToArray();
        foreach (var thumbprint in thumbprints)
        {
            if (thumbprint.Length != 40 || !thumbprint.All(char.IsAsciiHexDigit))
            {
                throw new InvalidOperationException($"Security:WellKnownAdminCertificates has '{thumbprint}', which is not a certificate thumbprint (40 hex digits, the SHA-1 of the certificate).");
            }
        }
        return new SecurityOptions
        {
            CertificatePath = path is null ? null : Path.GetFullPath(path),
            CertificateKeyPath = keyPath is null ? null : Path.GetFullPath(keyPath),
            CertificatePassword = section["Certificate:Password"],
            UnsecuredPublicNetworkAllowed = publicNetwork,
            WellKnownAdminCertificates = thumbprints,
        };
    }

    private static string? NonEmpty(string? value) => string.IsNullOrWhiteSpace(value) ? null : value;
}
