using System.Buffers;
using System.Security.Cryptography.X509Certificates;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// The client certificates a secured server knows, and its own, with RavenDB's routes and bodies
/// (its clients' <c>PutClientCertificateOperation</c>, <c>CreateClientCertificateOperation</c>,
/// <c>GetCertificatesOperation</c>, <c>GetCertificateOperation</c>,
/// <c>EditClientCertificateOperation</c>, <c>DeleteCertificateOperation</c>,
/// <c>ReplaceClusterCertificateOperation</c>). Answers without a body carry
/// <c>Content-Length: 0</c> or are 204: those clients fail on any other. On an unsecured server
/// every route is a 400 saying how to secure it. On a cluster the registrations are the cluster's
/// (<c>CertificatesHandler.Cluster.cs</c>): a change is checked here, then committed by the leader.
/// </summary>
public sealed partial class CertificatesHandler(ServerContext server) : HandlerBase(server)
{
    private const string PutExample = "{\"Name\":\"reporting\",\"Certificate\":\"MIIC...(base64 DER, or PEM)\",\"SecurityClearance\":\"ValidUser\",\"Permissions\":{\"Northwind\":\"Read\"}}";
    private const string CreateExample = "{\"Name\":\"reporting\",\"SecurityClearance\":\"ValidUser\",\"Permissions\":{\"Northwind\":\"ReadWrite\"},\"Password\":\"optional\"}";
    private const string EditExample = "{\"Thumbprint\":\"A1B2...\",\"Name\":\"reporting\",\"SecurityClearance\":\"ValidUser\",\"Permissions\":{\"Northwind\":\"Admin\"}}";
    private const string ReplaceExample = "{\"Certificate\":\"MII...(base64 of a PFX with its private key)\",\"Password\":\"optional\"}";

    /// <summary>
    /// <c>PUT /admin/certificates</c>: registers a client certificate's public part (201, no body).
    /// A certificate already registered under that thumbprint is replaced.
    /// </summary>
    [Route("/admin/certificates", "PUT")]
    [Access(RouteAccess.Operator)]
    public async ValueTask Put(RequestContext context)
    {
        var security = Secured();
        var (body, raw) = await ReadBodyAsync(context, PutExample).ConfigureAwait(false);
        var name = body.RequireName(PutExample);
        if (!string.IsNullOrEmpty(body.TwoFactorAuthenticationKey))
        {
            throw new FeatureNotSupportedException($"Two-factor authentication is not supported: the certificate '{name}' was not registered. Send it without TwoFactorAuthenticationKey.");
        }
        using var certificate = body.ReadPublicCertificate();
        if (string.Equals(certificate.Thumbprint, security.Certificate.Thumbprint, StringComparison.OrdinalIgnoreCase))
        {
            throw new BadRequestException($"The certificate {certificate.Thumbprint} is the server's own certificate, which is a ClusterAdmin already; it is not registered.");
        }
        var now = DateTime.UtcNow;
        if (certificate.NotAfter.ToUniversalTime() <= now)
        {
            throw new BadRequestException($"The certificate '{name}' ({certificate.Thumbprint}) expired on {certificate.NotAfter.ToUniversalTime():yyyy-MM-dd HH:mm} UTC: it could never be used. Renew it and register the renewal.");
        }
        var clearance = body.Clearance ?? SecurityClearance.ValidUser;
        var caller = context.Caller!;
        CertificateClearanceRules.EnsureMayGrant(caller, clearance, name);
        if (Registered(security, certificate.Thumbprint) is { } existing)
        {
            CertificateClearanceRules.EnsureMayChange(caller, existing, "replace");
        }
        await RegisterAsync(context, security, raw, CertificateDefinition.Of(certificate, name, clearance, body.Permissions)).ConfigureAwait(false);
    }

    /// <summary>
    /// <c>POST /admin/certificates</c>: makes a client certificate signed by the server's, registers
    /// it, and answers a zip of it (see <see cref="ClientCertificateArchive"/>).
    /// </summary>
    [Route("/admin/certificates", "POST")]
    [Access(RouteAccess.Operator)]
    public async ValueTask Create(RequestContext context)
    {
        var security = Secured();
        var (body, raw) = await ReadBodyAsync(context, CreateExample).ConfigureAwait(false);
        var name = body.RequireName(CreateExample);
        var now = DateTime.UtcNow;
        if (body.NotAfter is { } notAfter && notAfter <= now)
        {
            throw new BadRequestException($"\"NotAfter\" is {notAfter:yyyy-MM-dd HH:mm} UTC: a new certificate must expire in the future.");
        }
        var clearance = body.Clearance ?? SecurityClearance.ValidUser;
        CertificateClearanceRules.EnsureMayGrant(context.Caller!, clearance, name);
        // On a cluster the leader makes it (the private key is only in the answer, never in the state).
        var disposition = "attachment; filename=" + Uri.EscapeDataString(name) + ".zip";
        if (await LeaderForwarding.ForwardedAsync(context, (status, _, _) =>
            {
                // A content header: the leader's does not come back with its answer.
                if (status == StatusCodes.Status200OK)
                {
                    context.Response.Headers.ContentDisposition = disposition;
                }
                return ValueTask.CompletedTask;
            }, raw).ConfigureAwait(false))
        {
            return;
        }
        var (archive, definition) = ReadServerCertificate(security, issuer =>
        {
            using var certificate = ClientCertificateIssuer.Issue(name, issuer, now, body.NotAfter);
            var zip = ClientCertificateArchive.Create(name, certificate, issuer, string.IsNullOrEmpty(body.Password) ? null : body.Password);
            return (zip, CertificateDefinition.Of(certificate, name, clearance, body.Permissions));
        });
        await StoreAsync(context, security, definition).ConfigureAwait(false);
        context.Response.Headers.ContentDisposition = disposition;
        await context.WriteBytesAsync(archive, "application/zip").ConfigureAwait(false);
    }

    /// <summary>
    /// <c>GET /admin/certificates[?start=&amp;pageSize=][&amp;name=][&amp;metadataOnly=true]</c>: the
    /// server's certificate then the registered ones by name, paged together, as
    /// <c>{"Results":[...],"LoadedServerCert","WellKnownAdminCerts":[...]}</c>; with
    /// <c>?thumbprint=</c>, <c>Results</c> holds that one certificate (404, no body, when unknown).
    /// </summary>
    [Route("/admin/certificates", "GET")]
    [Access(RouteAccess.Operator)]
    public ValueTask List(RequestContext context)
    {
        var security = Secured();
        var query = new UrlQuery(context.Request.QueryString.Value);
        var metadataOnly = string.Equals(query.GetString("metadataOnly"), "true", StringComparison.OrdinalIgnoreCase);
        var server = ReadServerCertificate(security, CertificateResults.ServerDefinition);
        IEnumerable<CertificateDefinition> results;
        if (query.GetString("thumbprint") is { Length: > 0 } thumbprint)
        {
            var one = security.Store.Get(thumbprint.Trim())
                ?? (string.Equals(thumbprint.Trim(), server.Thumbprint, StringComparison.OrdinalIgnoreCase) ? server : null);
            if (one is null)
            {
                // RavenDB's answer: its clients read a 404 as "no such certificate" (null).
                Empty(context, StatusCodes.Status404NotFound);
                return ValueTask.CompletedTask;
            }
            results = [one];
        }
        else
        {
            var start = query.GetInt32("start", 0);
            var pageSize = query.GetInt32("pageSize", int.MaxValue);
            var name = query.GetString("name");
            results = security.Store.All.Prepend(server)
                .Where(d => name is null || d.Name == name)
                .Skip(start)
                .Take(pageSize);
        }
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteStartArray("Results");
        foreach (var definition in results)
        {
            CertificateResults.Write(json, definition, metadataOnly);
        }
        json.WriteEndArray();
        json.WriteString("LoadedServerCert", server.Thumbprint);
        json.WriteStartArray("WellKnownAdminCerts");
        foreach (var wellKnown in security.Options.WellKnownAdminCertificates)
        {
            json.WriteStringValue(wellKnown);
        }
        json.WriteEndArray();
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary><c>GET /certificates/whoami</c>: the caller's own certificate definition (RavenDB's route).</summary>
    [Route("/certificates/whoami", "GET")]
    [Access(RouteAccess.ValidUser)]
    public ValueTask WhoAmI(RequestContext context)
    {
        var security = Secured();
        var caller = context.Caller!;
        var definition = ReadServerCertificate(security, server => CertificateResults.DefinitionOf(caller, server));
        var json = context.StartJson();
        CertificateResults.Write(json, definition, metadataOnly: false);
        return context.CompleteJsonAsync();
    }

    /// <summary>
    /// <c>POST /admin/certificates/edit</c> <c>{"Thumbprint","Name","Permissions","SecurityClearance"}</c>:
    /// changes a registered certificate's name, clearance and permissions (201, no body); a field
    /// left out keeps its value.
    /// </summary>
    [Route("/admin/certificates/edit", "POST")]
    [Access(RouteAccess.Operator)]
    public async ValueTask Edit(RequestContext context)
    {
        var security = Secured();
        var (body, raw) = await ReadBodyAsync(context, EditExample).ConfigureAwait(false);
        if (string.IsNullOrEmpty(body.Thumbprint))
        {
            throw new BadRequestException("\"Thumbprint\" is required: the thumbprint of the registered certificate to edit, as " + EditExample);
        }
        var name = body.RequireName(EditExample);
        // Not a 404: RavenDB's clients take a 404 for success on this route.
        var existing = Registered(security, body.Thumbprint)
            ?? throw new BadRequestException($"No certificate with thumbprint {body.Thumbprint} is registered: register it first (PUT /admin/certificates).");
        var caller = context.Caller!;
        CertificateClearanceRules.EnsureMayChange(caller, existing, "edit");
        var clearance = body.Clearance ?? existing.Clearance;
        CertificateClearanceRules.EnsureMayGrant(caller, clearance, name);
        await RegisterAsync(context, security, raw, existing with
        {
            Name = name,
            Clearance = clearance,
            Permissions = body.Permissions ?? existing.Permissions,
        }).ConfigureAwait(false);
    }

    /// <summary><c>DELETE /admin/certificates?thumbprint=</c>: 204, also when none was registered.</summary>
    [Route("/admin/certificates", "DELETE")]
    [Access(RouteAccess.Operator)]
    public async ValueTask Delete(RequestContext context)
    {
        var security = Secured();
        var thumbprint = new UrlQuery(context.Request.QueryString.Value).GetString("thumbprint")?.Trim();
        if (string.IsNullOrEmpty(thumbprint))
        {
            throw new BadRequestException("Query parameter 'thumbprint' is required: the registered certificate to delete, as ?thumbprint=A1B2...");
        }
        var caller = context.Caller!;
        if (string.Equals(thumbprint, caller.Thumbprint, StringComparison.OrdinalIgnoreCase))
        {
            throw new BadRequestException($"The certificate {thumbprint} is the one this request came with: a certificate does not delete itself (use another ClusterAdmin or Operator certificate).");
        }
        var existing = Registered(security, thumbprint);
        if (existing is not null)
        {
            CertificateClearanceRules.EnsureMayChange(caller, existing, "delete");
        }
        if (await DeleteClusteredAsync(context, security, thumbprint).ConfigureAwait(false))
        {
            return;
        }
        if (existing is not null)
        {
            security.Store.Delete(thumbprint);
        }
        Empty(context, StatusCodes.Status204NoContent);
    }

    /// <summary>
    /// <c>POST /admin/certificates/replace-cluster-cert[?replaceImmediately=true]</c>
    /// <c>{"Certificate":"(base64 PFX)","Password"}</c>: the server certificate, replaced at once
    /// (new handshakes present it; open connections keep theirs) and written over the configured
    /// file(s) so that a restart serves it (201, no body). A single server has no cluster to wait
    /// for, so <c>replaceImmediately</c> changes nothing.
    /// </summary>
    [Route("/admin/certificates/replace-cluster-cert", "POST")]
    [Access(RouteAccess.ClusterAdmin)]
    public async ValueTask ReplaceServerCertificate(RequestContext context)
    {
        var security = Secured();
        var (body, _) = await ReadBodyAsync(context, ReplaceExample).ConfigureAwait(false);
        if (string.IsNullOrWhiteSpace(body.Certificate))
        {
            throw new BadRequestException("\"Certificate\" is required: the new server certificate as base64 of a PFX with its private key, as " + ReplaceExample);
        }
        byte[] pfx;
        try
        {
            pfx = Convert.FromBase64String(body.Certificate.Trim());
        }
        catch (FormatException)
        {
            throw new BadRequestException("\"Certificate\" is not base64: send the new server certificate as base64 of a PFX with its private key.");
        }
        X509Certificate2 certificate;
        try
        {
            certificate = CertificateLoader.LoadPfx(pfx, string.IsNullOrEmpty(body.Password) ? null : body.Password, "the body's Certificate", DateTime.UtcNow);
        }
        catch (CertificateLoadException e)
        {
            throw new BadRequestException(e.Message, e);
        }
        if (!CanServeTls(certificate))
        {
            var thumbprint = certificate.Thumbprint;
            certificate.Dispose();
            throw new BadRequestException($"The certificate {thumbprint} cannot serve TLS: its extended key usage lacks Server Authentication (1.3.6.1.5.5.7.3.1), so clients would refuse it. The server keeps its certificate.");
        }
        ServerCertificateFiles.Install(security.Options, security.Certificate, certificate);
        Empty(context, StatusCodes.Status201Created);
    }

    /// <summary>
    /// <c>GET /admin/certificates/server</c>: the certificate new handshakes present, its expiry
    /// (<c>DaysLeft</c>, <c>Expiring</c> within the warning period) and how many times it was replaced.
    /// </summary>
    [Route("/admin/certificates/server", "GET")]
    [Access(RouteAccess.Operator)]
    public ValueTask ServerCertificate(RequestContext context)
    {
        var security = Secured();
        var (thumbprint, subject, issuer, notBefore, notAfter) = ReadServerCertificate(security, certificate =>
            (certificate.Thumbprint, certificate.Subject, certificate.Issuer, certificate.NotBefore.ToUniversalTime(), certificate.NotAfter.ToUniversalTime()));
        var left = notAfter - DateTime.UtcNow;
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteString("Thumbprint", thumbprint);
        json.WriteString("Subject", subject);
        json.WriteString("Issuer", issuer);
        JsonDefaults.WriteTime(json, "NotBefore", notBefore);
        JsonDefaults.WriteTime(json, "NotAfter", notAfter);
        json.WriteNumber("DaysLeft", Math.Round(Math.Max(0, left.TotalDays), 2));
        json.WriteBoolean("Expiring", left < security.Options.ExpiryWarning);
        json.WriteNumber("ExpiryWarningDays", security.Options.ExpiryWarning.TotalDays);
        json.WriteNumber("Replacements", security.Certificate.Replacements);
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    private ServerSecurity Secured() => Server.Security ?? throw new BadRequestException(
        "This server is not secured: it has no certificates to manage. Secure it with a server certificate: "
        + "--Security:Certificate:Path server.pfx --Security:Certificate:Password ... (or a PEM certificate with --Security:Certificate:KeyPath), "
        + "or JACKDAW_SECURITY__CERTIFICATE__PATH; it then serves https only, and every request presents a client certificate.");

    /// <summary>
    /// What <paramref name="read"/> makes of the current server certificate, counted meanwhile: a
    /// replacement may otherwise dispose it under the read.
    /// </summary>
    private static T ReadServerCertificate<T>(ServerSecurity security, Func<X509Certificate2, T> read)
    {
        var counted = security.Certificate.Acquire();
        try
        {
            return read(counted.Certificate);
        }
        finally
        {
            counted.Release();
        }
    }

    /// <summary>The body, parsed and as its bytes (a member that does not lead passes them on).</summary>
    private static async ValueTask<(CertificateRequestBody Body, byte[] Raw)> ReadBodyAsync(RequestContext context, string example)
    {
        var read = await DocumentBodies.BufferAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false);
        byte[] raw;
        try
        {
            raw = read.Buffer.ToArray();
        }
        finally
        {
            context.Request.BodyReader.AdvanceTo(read.Buffer.End);
        }
        using var json = raw.Length == 0 ? null : System.Text.Json.JsonDocument.Parse(raw);
        return (CertificateRequestBody.Parse(json, example), raw);
    }

    /// <summary>No extended key usage at all allows every use; otherwise it must list Server Authentication.</summary>
    private static bool CanServeTls(X509Certificate2 certificate) =>
        certificate.Extensions.OfType<X509EnhancedKeyUsageExtension>().FirstOrDefault() is not { } usage
        || usage.EnhancedKeyUsages.Cast<System.Security.Cryptography.Oid>().Any(oid => oid.Value == "1.3.6.1.5.5.7.3.1");

    private static void Empty(RequestContext context, int status)
    {
        context.Response.StatusCode = status;
        if (status != StatusCodes.Status204NoContent)
        {
            context.Response.ContentLength = 0;
        }
    }
}
