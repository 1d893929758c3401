using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Security;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Security;

/// <summary>
/// The server's own certificate through the API: <c>GET /admin/certificates/server</c>,
/// <c>replace-cluster-cert</c> (replaced at once and written to its file), and a restart on the
/// same data folder and certificate file that keeps the registered clients and the new certificate.
/// </summary>
public sealed class ServerCertificateApiTests
{
    private static StringContent ReplaceBody(X509Certificate2 certificate, string? password) =>
        Api.Json($$"""{"Name":"next","Certificate":"{{Convert.ToBase64String(certificate.Export(X509ContentType.Pfx, password))}}"{{(password is null ? "" : $",\"Password\":\"{password}\"")}}}""");


    [Fact]
    public async Task TheServerCertificateRouteShowsItsExpiry()
    {
        await using var server = await SecuredServer.StartAsync(TestCertificates.Server(notAfter: DateTimeOffset.UtcNow.AddDays(5)), pem: false);
        using var response = await server.Admin.GetAsync("/admin/certificates/server");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var body = await Api.JsonAsync(response);
        Assert.Equal(server.ServerCertificate.Thumbprint, body.GetProperty("Thumbprint").GetString());
        Assert.Equal("CN=jackdaw-test-server", body.GetProperty("Subject").GetString());
        Assert.InRange(body.GetProperty("DaysLeft").GetDouble(), 4.9, 5.0);
        Assert.True(body.GetProperty("Expiring").GetBoolean());
        Assert.Equal(14, body.GetProperty("ExpiryWarningDays").GetDouble());
        Assert.Equal(0, body.GetProperty("Replacements").GetInt64());
        Assert.Matches(@"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$", body.GetProperty("NotAfter").GetString());
    }

    [Fact]
    public async Task ReplaceClusterCertServesTheNewCertificateAtOnceAndWritesItsFile()
    {
        await using var server = await SecuredServer.StartAsync();
        using var next = TestCertificates.Server("jackdaw-next");
        var keepAlive = server.Client(server.ServerCertificate);
        using (var warm = await keepAlive.GetAsync("/admin/stats"))
        {
            Assert.Equal(HttpStatusCode.OK, warm.StatusCode);
        }

        using (var replaced = await server.Admin.PostAsync("/admin/certificates/replace-cluster-cert?replaceImmediately=true", ReplaceBody(next, "pfx-pass")))
        {
            CertificatesApiTests.AssertEmpty(replaced, HttpStatusCode.Created);
        }

        Assert.Equal(next.Thumbprint, await TestCertificates.PresentedThumbprintAsync(server.Url));
        using (var onDisk = X509CertificateLoader.LoadPkcs12FromFile(server.CertificatePath, SecuredServer.CertificatePassword))
        {
            Assert.Equal(next.Thumbprint, onDisk.Thumbprint);
        }
        // The new certificate is the ClusterAdmin now; the old one is nobody.
        using (var status = await server.Client(next).GetAsync("/admin/certificates/server"))
        {
            var body = await Api.JsonAsync(status);
            Assert.Equal(next.Thumbprint, body.GetProperty("Thumbprint").GetString());
            Assert.Equal(1, body.GetProperty("Replacements").GetInt64());
        }
        using (var old = await keepAlive.GetAsync("/admin/stats"))
        {
            Assert.Equal(HttpStatusCode.Forbidden, old.StatusCode);
        }

        // The same certificate again changes nothing.
        using (var same = await server.Client(next).PostAsync("/admin/certificates/replace-cluster-cert", ReplaceBody(next, null)))
        {
            CertificatesApiTests.AssertEmpty(same, HttpStatusCode.Created);
        }
        Assert.Equal(1, server.Security.Certificate.Replacements);
    }

    [Fact]
    public async Task BackToBackReplacementsLeaveTheLastOneServing()
    {
        await using var server = await SecuredServer.StartAsync();
        using var admin = TestCertificates.Client("admin");
        server.Register(admin, SecurityClearance.ClusterAdmin);
        var client = server.Client(admin);
        X509Certificate2[] certificates = [server.ServerCertificate, TestCertificates.Server("jackdaw-a"), TestCertificates.Server("jackdaw-b")];
        // Each write wakes the file watcher, whose reload may still be reading the file when the next
        // replacement is installed: it must never put the older certificate back.
        for (var round = 1; round <= 12; round++)
        {
            var next = certificates[round % certificates.Length];
            using (var replaced = await client.PostAsync("/admin/certificates/replace-cluster-cert", ReplaceBody(next, null)))
            {
                CertificatesApiTests.AssertEmpty(replaced, HttpStatusCode.Created);
            }
            Assert.Equal(next.Thumbprint, await TestCertificates.PresentedThumbprintAsync(server.Url));
        }
        var last = certificates[12 % certificates.Length];
        Assert.Equal(last.Thumbprint, await TestCertificates.PresentedThumbprintAsync(server.Url));
        // A stale reload would have counted as a replacement (and its correction as another).
        Assert.Equal(12, server.Security.Certificate.Replacements);
        using var onDisk = X509CertificateLoader.LoadPkcs12FromFile(server.CertificatePath, SecuredServer.CertificatePassword);
        Assert.Equal(last.Thumbprint, onDisk.Thumbprint);
    }

    [Fact]
    public async Task AnUnusableReplacementIs400AndTheServerKeepsItsCertificate()
    {
        await using var server = await SecuredServer.StartAsync();
        using var clientOnly = TestCertificates.Client("client-only");
        using var expired = TestCertificates.Server("expired", notBefore: DateTimeOffset.UtcNow.AddDays(-9), notAfter: DateTimeOffset.UtcNow.AddDays(-1));
        using var withKey = TestCertificates.Server("public");
        using var publicOnly = X509CertificateLoader.LoadCertificate(withKey.RawData);
        using var locked = TestCertificates.Server("locked");
        (StringContent Body, string Expected)[] cases =
        [
            (Api.Json("{}"), "\"Certificate\" is required"),
            (Api.Json("""{"Certificate":"%%%"}"""), "not base64"),
            (ReplaceBody(clientOnly, null), "lacks Server Authentication"),
            (ReplaceBody(expired, null), "expired on"),
            (Api.Json($$"""{"Certificate":"{{Convert.ToBase64String(locked.Export(X509ContentType.Pfx, "right"))}}","Password":"wrong"}"""), "cannot be read"),
            (Api.Json($$"""{"Certificate":"{{Convert.ToBase64String(publicOnly.Export(X509ContentType.Pfx))}}"}"""), "no private key"),
        ];
        foreach (var (body, expected) in cases)
        {
            using var response = await server.Admin.PostAsync("/admin/certificates/replace-cluster-cert", body);
            Assert.Contains(expected, await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, ErrorTypes.BadRequest), StringComparison.Ordinal);
        }
        Assert.Equal(server.ServerCertificate.Thumbprint, await TestCertificates.PresentedThumbprintAsync(server.Url));
        Assert.Equal(0, server.Security.Certificate.Replacements);
    }

    [Fact]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public async Task APemServerCertificateIsReplacedInItsCertificateAndKeyFiles()
    {
        await using var server = await SecuredServer.StartAsync(TestCertificates.Server(), pem: true);
        var (crt, key) = (server.CertificatePath, server.KeyPath!);
        using var next = TestCertificates.Server("jackdaw-next");
        File.SetUnixFileMode(key, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        var certificateMode = File.GetUnixFileMode(crt);

        using (var replaced = await server.Admin.PostAsync("/admin/certificates/replace-cluster-cert", ReplaceBody(next, null)))
        {
            CertificatesApiTests.AssertEmpty(replaced, HttpStatusCode.Created);
        }

        using var onDisk = CertificateLoader.Load(crt, key, null, DateTime.UtcNow);
        Assert.Equal(next.Thumbprint, onDisk.Thumbprint);
        // Each file keeps its permissions: the key stays the owner's only.
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(key));
        Assert.Equal(certificateMode, File.GetUnixFileMode(crt));
        Assert.Equal(next.Thumbprint, await TestCertificates.PresentedThumbprintAsync(server.Url));
        Assert.Equal(["server.crt", "server.key"], Directory.GetFiles(server.CertificateFolder).Select(Path.GetFileName).Order(StringComparer.Ordinal));
    }

    [Fact]
    public async Task ARestartKeepsTheRegisteredCertificatesAndTheInstalledServerCertificate()
    {
        await using var first = await SecuredServer.StartAsync();
        using (await first.Admin.PutAsync("/admin/databases?name=shop", null))
        {
        }
        using var clerk = TestCertificates.Client("clerk");
        using (var put = await first.Admin.PutAsync("/admin/certificates", CertificatesApiTests.Body(clerk, "clerk", "ValidUser", """{"Shop":"ReadWrite"}""")))
        {
            CertificatesApiTests.AssertEmpty(put, HttpStatusCode.Created);
        }
        using var next = TestCertificates.Server("jackdaw-next");
        using (var replaced = await first.Admin.PostAsync("/admin/certificates/replace-cluster-cert", ReplaceBody(next, null)))
        {
            CertificatesApiTests.AssertEmpty(replaced, HttpStatusCode.Created);
        }

        await using var second = await first.RestartAsync();
        Assert.Equal(next.Thumbprint, second.ServerCertificate.Thumbprint);
        Assert.Equal(next.Thumbprint, await TestCertificates.PresentedThumbprintAsync(second.Url));
        var clerkClient = second.Client(clerk);
        using (var write = await clerkClient.PutAsync("/databases/shop/docs?id=orders/1", Api.Json("{}")))
        {
            Assert.Equal(HttpStatusCode.Created, write.StatusCode);
        }
        using (var admin = await clerkClient.GetAsync("/admin/stats"))
        {
            Assert.Equal(HttpStatusCode.Forbidden, admin.StatusCode);
        }
        var definition = Assert.Single(second.Security.Store.All);
        Assert.Equal(("clerk", SecurityClearance.ValidUser, DatabaseAccess.ReadWrite), (definition.Name, definition.Clearance, definition.AccessTo("shop")));
    }
}
