using System.Security.Cryptography.X509Certificates;

namespace Jackdaw.Server.Security;

/// <summary>Who a request's client certificate is: its clearance and, for a registered one, its definition.</summary>
public sealed class Caller(X509Certificate2 certificate, SecurityClearance clearance, CertificateDefinition? definition)
{
    public X509Certificate2 Certificate { get; } = certificate;

    public string Thumbprint { get; } = certificate.Thumbprint;

    public SecurityClearance Clearance { get; } = clearance;

    /// <summary>The registered definition; null for the server's own certificate and the well-known admin ones.</summary>
    public CertificateDefinition? Definition { get; } = definition;

    public DateTime NotBefore { get; } = certificate.NotBefore.ToUniversalTime();

    public DateTime NotAfter { get; } = certificate.NotAfter.ToUniversalTime();

    /// <summary>True when this caller may read <paramref name="database"/> at least.</summary>
    public bool CanSee(ReadOnlySpan<char> database) =>
        Clearance.Rank() >= SecurityClearance.Operator.Rank() || Definition?.AccessTo(database) is not null;

    public string Describe() => Definition is { } known ? $"'{known.Name}' ({Thumbprint})" : Thumbprint;
}

/// <summary>Why a request is refused: <see cref="NotAuthenticated"/> answers 401, the rest 403.</summary>
public sealed record AccessDenied(bool NotAuthenticated, string Message)
{
    public static readonly AccessDenied NoCertificate = new(true, "This server requires a client certificate: present one registered with the server at the TLS handshake (curl --cert client.pem --key client.key, or the client's Certificate setting).");
}

/// <summary>
/// One connection's cached identity: a TLS connection presents one client certificate for its
/// whole life, so it is looked up once and again only when the certificate store (or the server
/// certificate) changed since.
/// </summary>
public sealed class ConnectionIdentity
{
    internal long Version = -1;
    internal Caller? Caller;
    internal AccessDenied? Denied;
}

/// <summary>
/// Decides whether a request may run: authentication by the client certificate the connection
/// presented, then authorization of the route's <see cref="RouteAccess"/> and the database in its
/// path against the caller's clearance and permissions (RavenDB's model).
/// </summary>
public sealed class Authorizer(CertificateStore store, ServerCertificateHolder serverCertificate, SecurityOptions options, TimeProvider? time = null)
{
    private readonly HashSet<string> _wellKnownAdmins = new(options.WellKnownAdminCertificates, StringComparer.OrdinalIgnoreCase);
    private readonly TimeProvider _time = time ?? TimeProvider.System;

    public CertificateStore Store { get; } = store;

    public ServerCertificateHolder ServerCertificate { get; } = serverCertificate;

    /// <summary>
    /// The caller behind <paramref name="certificate"/>, from <paramref name="connection"/>'s cache
    /// when still current; null with <paramref name="denied"/> set when it is refused.
    /// </summary>
    public Caller? Identify(X509Certificate2? certificate, ConnectionIdentity? connection, out AccessDenied? denied)
    {
        if (certificate is null)
        {
            denied = AccessDenied.NoCertificate;
            return null;
        }
        var version = Store.Version + (ServerCertificate.Replacements << 32);
        Caller? caller;
        if (connection is not null && connection.Version == version)
        {
            caller = connection.Caller;
            denied = connection.Denied;
        }
        else
        {
            caller = Lookup(certificate, out denied);
            if (connection is not null)
            {
                connection.Caller = caller;
                connection.Denied = denied;
                connection.Version = version;
            }
        }
        if (caller is not null)
        {
            // A long-lived connection may outlast its certificate.
            var now = _time.GetUtcNow().UtcDateTime;
            if (caller.NotAfter <= now)
            {
                denied = new AccessDenied(false, $"The client certificate {caller.Describe()} expired on {caller.NotAfter:yyyy-MM-dd HH:mm} UTC: renew it (a renewal with the same key and issuer keeps its access).");
                return null;
            }
            if (caller.NotBefore > now)
            {
                denied = new AccessDenied(false, $"The client certificate {caller.Describe()} is not valid before {caller.NotBefore:yyyy-MM-dd HH:mm} UTC.");
                return null;
            }
        }
        return caller;
    }

    private Caller? Lookup(X509Certificate2 certificate, out AccessDenied? denied)
    {
        denied = null;
        if (_wellKnownAdmins.Contains(certificate.Thumbprint) || certificate.Thumbprint == ServerCertificate.Thumbprint)
        {
            return new Caller(certificate, SecurityClearance.ClusterAdmin, null);
        }
        if (Store.Find(certificate) is { } definition)
        {
            return new Caller(certificate, definition.Clearance, definition);
        }
        denied = new AccessDenied(false, $"The client certificate {certificate.Thumbprint} ({certificate.Subject}) is not registered with this server: a ClusterAdmin or Operator registers it (PUT /admin/certificates).");
        return null;
    }

    /// <summary>Null when <paramref name="caller"/> may do what <paramref name="needed"/> asks in <paramref name="database"/> (empty for a server route).</summary>
    public static AccessDenied? Authorize(Caller caller, RouteAccess needed, ReadOnlySpan<char> database)
    {
        var rank = caller.Clearance.Rank();
        switch (needed)
        {
            case RouteAccess.Unauthenticated:
            case RouteAccess.ValidUser:
                return null;
            case RouteAccess.Operator:
                return rank >= SecurityClearance.Operator.Rank() ? null : Clearance(caller, "Operator");
            case RouteAccess.ClusterAdmin:
                return rank >= SecurityClearance.ClusterAdmin.Rank() ? null : Clearance(caller, "ClusterAdmin");
        }
        if (rank >= SecurityClearance.Operator.Rank())
        {
            return null;
        }
        var access = caller.Definition?.AccessTo(database);
        if (access is null)
        {
            return new AccessDenied(false, $"The client certificate {caller.Describe()} has no access to database '{database}'.");
        }
        if (access.Value.Allows(needed))
        {
            return null;
        }
        return new AccessDenied(false, $"The client certificate {caller.Describe()} has {access} access to database '{database}'; this request needs {NameOf(needed)}.");
    }

    private static AccessDenied Clearance(Caller caller, string needed) =>
        new(false, $"The client certificate {caller.Describe()} has clearance {caller.Clearance}; this request needs {needed}.");

    private static string NameOf(RouteAccess access) => access switch
    {
        RouteAccess.DatabaseReadWrite => "ReadWrite",
        RouteAccess.DatabaseAdmin => "Admin",
        _ => "Read",
    };
}
