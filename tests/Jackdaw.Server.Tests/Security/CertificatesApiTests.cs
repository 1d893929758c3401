using System.Net;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Security;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Security;

/// <summary>
/// The client-certificate routes in RavenDB's shapes: register, list, get, edit, delete, who am I;
/// the clearance rules; the 400s that name what is wrong; and the databases a ValidUser sees.
/// </summary>
public sealed class CertificatesApiTests : IAsyncLifetime
{
    private SecuredServer _server = null!;

    public async Task InitializeAsync() => _server = await SecuredServer.StartAsync();

    public async Task DisposeAsync() => await _server.DisposeAsync();

    internal static StringContent Body(X509Certificate2 certificate, string name, string clearance, string permissions = "{}") =>
        Api.Json($$"""{"Name":"{{name}}","Certificate":"{{Convert.ToBase64String(certificate.RawData)}}","SecurityClearance":"{{clearance}}","Permissions":{{permissions}}}""");

    /// <summary>A 201 or 204 without a body: RavenDB's clients fail on anything else.</summary>
    internal static void AssertEmpty(HttpResponseMessage response, HttpStatusCode status)
    {
        Assert.Equal(status, response.StatusCode);
        if (status != HttpStatusCode.NoContent)
        {
            Assert.Equal(0, response.Content.Headers.ContentLength);
        }
    }

    private async Task CreateDatabasesAsync(params string[] names)
    {
        foreach (var name in names)
        {
            using var created = await _server.Admin.PutAsync($"/admin/databases?name={name}", null);
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
    }

    private async Task<JsonElement> GetAsync(HttpClient client, string uri)
    {
        using var response = await client.GetAsync(uri);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return await Api.JsonAsync(response);
    }

    [Theory]
    [InlineData("GET", "/admin/certificates")]
    [InlineData("PUT", "/admin/certificates")]
    [InlineData("POST", "/admin/certificates")]
    [InlineData("DELETE", "/admin/certificates?thumbprint=AB")]
    [InlineData("POST", "/admin/certificates/edit")]
    [InlineData("POST", "/admin/certificates/replace-cluster-cert")]
    [InlineData("GET", "/admin/certificates/server")]
    [InlineData("GET", "/certificates/whoami")]
    public async Task AnUnsecuredServerAnswersEveryCertificateRouteWithHowToSecureIt(string method, string uri)
    {
        await using var unsecured = await InProcessServer.StartAsync();
        using var response = await unsecured.Client.SendAsync(Api.Request(new HttpMethod(method), uri, "{}"));
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, ErrorTypes.BadRequest);
        Assert.Contains("not secured", message, StringComparison.Ordinal);
        Assert.Contains("--Security:Certificate:Path", message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task APutCertificateGetsItsAccessAtOnceInAnyCasing()
    {
        await CreateDatabasesAsync("Shop", "payroll");
        using var clerk = TestCertificates.Client("clerk");
        var client = _server.Client(clerk);
        using (var before = await client.GetAsync("/databases"))
        {
            Assert.Equal(HttpStatusCode.Forbidden, before.StatusCode);
        }

        using (var put = await _server.Admin.PutAsync("/admin/certificates", Body(clerk, "clerk", "ValidUser", """{"SHOP":"ReadWrite"}""")))
        {
            AssertEmpty(put, HttpStatusCode.Created);
        }

        // The same keep-alive connection sees the registration.
        using (var write = await client.PutAsync("/databases/shop/docs?id=orders/1", Api.Json("{}")))
        {
            Assert.Equal(HttpStatusCode.Created, write.StatusCode);
        }
        using (var other = await client.GetAsync("/databases/payroll/docs?id=a"))
        {
            Assert.Equal(HttpStatusCode.Forbidden, other.StatusCode);
        }
    }

    [Fact]
    public async Task APemCertificateRegistersAndTheSameThumbprintIsReplaced()
    {
        using var reporter = TestCertificates.Client("reporter");
        var pem = JsonSerializer.Serialize(reporter.ExportCertificatePem());
        using (var put = await _server.Admin.PutAsync("/admin/certificates", Api.Json($$$"""{"Name":"reporting","Certificate":{{{pem}}},"SecurityClearance":"Operator","Permissions":{}}""")))
        {
            AssertEmpty(put, HttpStatusCode.Created);
        }
        using (var again = await _server.Admin.PutAsync("/admin/certificates", Body(reporter, "reporting v2", "ValidUser", """{"Sales":"Read"}""")))
        {
            AssertEmpty(again, HttpStatusCode.Created);
        }

        var one = (await GetAsync(_server.Admin, "/admin/certificates?thumbprint=" + reporter.Thumbprint.ToLowerInvariant())).GetProperty("Results");
        var definition = Assert.Single(one.EnumerateArray());
        Assert.Equal("reporting v2", definition.GetProperty("Name").GetString());
        Assert.Equal("ValidUser", definition.GetProperty("SecurityClearance").GetString());
        Assert.Single(_server.Security.Store.All);
    }

    [Fact]
    public async Task TheListAndOneCertificateAreInRavenDbsShape()
    {
        using var first = TestCertificates.Client("first");
        using var second = TestCertificates.Client("second");
        using (await _server.Admin.PutAsync("/admin/certificates", Body(first, "a-first", "ValidUser", """{"North.Wind":"Admin","shop":"Read"}""")))
        using (await _server.Admin.PutAsync("/admin/certificates", Body(second, "b-second", "Operator")))
        {
        }

        var list = await GetAsync(_server.Admin, "/admin/certificates?start=0&pageSize=10");
        Assert.Equal(_server.ServerCertificate.Thumbprint, list.GetProperty("LoadedServerCert").GetString());
        Assert.Empty(list.GetProperty("WellKnownAdminCerts").EnumerateArray());
        var results = list.GetProperty("Results").EnumerateArray().ToList();
        Assert.Equal(["Server Certificate", "a-first", "b-second"], results.Select(r => r.GetProperty("Name").GetString()));
        Assert.Equal("ClusterNode", results[0].GetProperty("SecurityClearance").GetString());

        var entry = results[1];
        Assert.Equal(first.Thumbprint, entry.GetProperty("Thumbprint").GetString());
        Assert.Equal("ValidUser", entry.GetProperty("SecurityClearance").GetString());
        // Database names as registered: RavenDB's clients read these keys verbatim.
        Assert.Equal(["North.Wind", "shop"], entry.GetProperty("Permissions").EnumerateObject().Select(p => p.Name));
        Assert.Equal("Admin", entry.GetProperty("Permissions").GetProperty("North.Wind").GetString());
        Assert.Equal(first.NotAfter.ToUniversalTime().ToString("yyyy-MM-dd'T'HH:mm:ss'.0000000Z'"), entry.GetProperty("NotAfter").GetString());
        Assert.Matches(@"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$", entry.GetProperty("NotBefore").GetString());
        Assert.Equal(CertificateDefinition.PinningHash(first), entry.GetProperty("PublicKeyPinningHash").GetString());
        Assert.Equal("", entry.GetProperty("CollectionPrimaryKey").GetString());
        Assert.Empty(entry.GetProperty("CollectionSecondaryKeys").EnumerateArray());
        Assert.Equal(first.RawData, entry.GetProperty("Certificate").GetBytesFromBase64());

        var page = await GetAsync(_server.Admin, "/admin/certificates?start=2&pageSize=1");
        Assert.Equal("b-second", Assert.Single(page.GetProperty("Results").EnumerateArray()).GetProperty("Name").GetString());
        var named = await GetAsync(_server.Admin, "/admin/certificates?name=a-first&metadataOnly=true");
        var metadata = Assert.Single(named.GetProperty("Results").EnumerateArray());
        Assert.False(metadata.TryGetProperty("Certificate", out _));

        using var unknown = await _server.Admin.GetAsync("/admin/certificates?thumbprint=0000000000000000000000000000000000000000");
        Assert.Equal(HttpStatusCode.NotFound, unknown.StatusCode);
        Assert.Equal(0, unknown.Content.Headers.ContentLength);
    }

    [Fact]
    public async Task WhoAmIAnswersTheCallersOwnDefinition()
    {
        await CreateDatabasesAsync("shop");
        using var user = TestCertificates.Client("user");
        _server.Register(user, SecurityClearance.ValidUser, ("shop", DatabaseAccess.Read));
        var mine = await GetAsync(_server.Client(user), "/certificates/whoami");
        Assert.Equal("user", mine.GetProperty("Name").GetString());
        Assert.Equal(user.Thumbprint, mine.GetProperty("Thumbprint").GetString());
        Assert.Equal("Read", mine.GetProperty("Permissions").GetProperty("shop").GetString());

        var server = await GetAsync(_server.Admin, "/certificates/whoami");
        Assert.Equal("Server Certificate", server.GetProperty("Name").GetString());
        Assert.Equal("ClusterNode", server.GetProperty("SecurityClearance").GetString());
    }

    [Fact]
    public async Task EditChangesNameClearanceAndPermissionsAndKeepsWhatItLeavesOut()
    {
        using var user = TestCertificates.Client("user");
        _server.Register(user, SecurityClearance.ValidUser, ("shop", DatabaseAccess.Read));
        using (var edit = await _server.Admin.PostAsync("/admin/certificates/edit", Api.Json($$"""{"Thumbprint":"{{user.Thumbprint}}","Name":"renamed","Permissions":{"shop":"Admin","hr":"ReadWrite"},"SecurityClearance":"ValidUser"}""")))
        {
            AssertEmpty(edit, HttpStatusCode.Created);
        }
        var edited = _server.Security.Store.Get(user.Thumbprint)!;
        Assert.Equal("renamed", edited.Name);
        Assert.Equal(DatabaseAccess.Admin, edited.AccessTo("SHOP"));
        Assert.Equal(DatabaseAccess.ReadWrite, edited.AccessTo("hr"));

        using (var nameOnly = await _server.Admin.PostAsync("/admin/certificates/edit", Api.Json($$"""{"Thumbprint":"{{user.Thumbprint.ToLowerInvariant()}}","Name":"again"}""")))
        {
            AssertEmpty(nameOnly, HttpStatusCode.Created);
        }
        Assert.Equal(DatabaseAccess.Admin, _server.Security.Store.Get(user.Thumbprint)!.AccessTo("shop"));

        using var unknown = await _server.Admin.PostAsync("/admin/certificates/edit", Api.Json("""{"Thumbprint":"0000000000000000000000000000000000000000","Name":"x"}"""));
        Assert.Contains("is registered", await Api.AssertErrorAsync(unknown, HttpStatusCode.BadRequest, ErrorTypes.BadRequest), StringComparison.Ordinal);
    }

    [Fact]
    public async Task ADeletedCertificateLosesItsAccessOnItsOpenConnection()
    {
        using var operatorCertificate = TestCertificates.Client("operator");
        _server.Register(operatorCertificate, SecurityClearance.Operator);
        var client = _server.Client(operatorCertificate);
        using (var before = await client.GetAsync("/admin/stats"))
        {
            Assert.Equal(HttpStatusCode.OK, before.StatusCode);
        }

        using (var self = await client.DeleteAsync("/admin/certificates?thumbprint=" + operatorCertificate.Thumbprint))
        {
            Assert.Contains("does not delete itself", await Api.AssertErrorAsync(self, HttpStatusCode.BadRequest, ErrorTypes.BadRequest), StringComparison.Ordinal);
        }
        using (var delete = await _server.Admin.DeleteAsync("/admin/certificates?thumbprint=" + operatorCertificate.Thumbprint))
        {
            AssertEmpty(delete, HttpStatusCode.NoContent);
        }
        using (var after = await client.GetAsync("/admin/stats"))
        {
            Assert.Contains("not registered", await Api.AssertErrorAsync(after, HttpStatusCode.Forbidden, ErrorTypes.Authorization), StringComparison.Ordinal);
        }

        using (var again = await _server.Admin.DeleteAsync("/admin/certificates?thumbprint=" + operatorCertificate.Thumbprint))
        {
            AssertEmpty(again, HttpStatusCode.NoContent);
        }
        using var missing = await _server.Admin.DeleteAsync("/admin/certificates");
        Assert.Contains("'thumbprint' is required", await Api.AssertErrorAsync(missing, HttpStatusCode.BadRequest, ErrorTypes.BadRequest), StringComparison.Ordinal);
    }

    [Fact]
    public async Task AnOperatorManagesCertificatesOnlyUpToOperator()
    {
        using var operatorCertificate = TestCertificates.Client("operator");
        using var admin = TestCertificates.Client("admin");
        using var peer = TestCertificates.Client("peer");
        using var newcomer = TestCertificates.Client("newcomer");
        _server.Register(operatorCertificate, SecurityClearance.Operator);
        _server.Register(admin, SecurityClearance.ClusterAdmin);
        _server.Register(peer, SecurityClearance.Operator);
        var client = _server.Client(operatorCertificate);

        async Task AssertRefused(HttpResponseMessage response, string expected)
        {
            using (response)
            {
                Assert.Contains(expected, await Api.AssertErrorAsync(response, HttpStatusCode.Forbidden, ErrorTypes.Authorization), StringComparison.Ordinal);
            }
        }

        await AssertRefused(await client.PutAsync("/admin/certificates", Body(newcomer, "newcomer", "ClusterAdmin")), "cannot give the certificate 'newcomer' clearance ClusterAdmin");
        await AssertRefused(await client.PostAsync("/admin/certificates", Api.Json("""{"Name":"made","SecurityClearance":"ClusterAdmin","Permissions":{}}""")), "clearance ClusterAdmin");
        await AssertRefused(await client.PostAsync("/admin/certificates/edit", Api.Json($$"""{"Thumbprint":"{{admin.Thumbprint}}","Name":"demoted","SecurityClearance":"Operator"}""")), "cannot edit the certificate 'admin'");
        await AssertRefused(await client.PostAsync("/admin/certificates/edit", Api.Json($$"""{"Thumbprint":"{{peer.Thumbprint}}","Name":"promoted","SecurityClearance":"ClusterAdmin"}""")), "clearance ClusterAdmin");
        await AssertRefused(await client.DeleteAsync("/admin/certificates?thumbprint=" + admin.Thumbprint), "cannot delete the certificate 'admin'");
        await AssertRefused(await client.PutAsync("/admin/certificates", Body(admin, "admin", "Operator")), "cannot replace the certificate 'admin'");
        await AssertRefused(await client.PostAsync("/admin/certificates/replace-cluster-cert", Api.Json("{}")), "needs ClusterAdmin");
        Assert.Equal(SecurityClearance.ClusterAdmin, _server.Security.Store.Get(admin.Thumbprint)!.Clearance);

        using (var put = await client.PutAsync("/admin/certificates", Body(newcomer, "newcomer", "Operator")))
        {
            AssertEmpty(put, HttpStatusCode.Created);
        }
        using (var edit = await client.PostAsync("/admin/certificates/edit", Api.Json($$$"""{"Thumbprint":"{{{peer.Thumbprint}}}","Name":"peer","SecurityClearance":"ValidUser","Permissions":{"shop":"Read"}}""")))
        {
            AssertEmpty(edit, HttpStatusCode.Created);
        }
        using (var delete = await client.DeleteAsync("/admin/certificates?thumbprint=" + newcomer.Thumbprint))
        {
            AssertEmpty(delete, HttpStatusCode.NoContent);
        }

        // Only a ClusterAdmin grants ClusterAdmin.
        using (var granted = await _server.Client(admin).PutAsync("/admin/certificates", Body(newcomer, "newcomer", "ClusterAdmin")))
        {
            AssertEmpty(granted, HttpStatusCode.Created);
        }

        using var user = TestCertificates.Client("user");
        _server.Register(user, SecurityClearance.ValidUser, ("shop", DatabaseAccess.Admin));
        await AssertRefused(await _server.Client(user).GetAsync("/admin/certificates"), "needs Operator");
    }

    public static TheoryData<string, string> BadBodies()
    {
        using var certificate = TestCertificates.Client("bad");
        var der = Convert.ToBase64String(certificate.RawData);
        var pfx = Convert.ToBase64String(certificate.Export(X509ContentType.Pfx));
        var withKey = JsonSerializer.Serialize(certificate.ExportCertificatePem() + "\n" + certificate.GetRSAPrivateKey()!.ExportPkcs8PrivateKeyPem());
        var two = JsonSerializer.Serialize(certificate.ExportCertificatePem() + "\n" + certificate.ExportCertificatePem());
        return new()
        {
            { "[1]", "must be a JSON object" },
            { $$"""{"Certificate":"{{der}}"}""", "\"Name\" is required" },
            { $$"""{"Name":"  ","Certificate":"{{der}}"}""", "\"Name\" is required" },
            { $$"""{"Name":7,"Certificate":"{{der}}"}""", "\"Name\" must be a string" },
            { """{"Name":"x"}""", "\"Certificate\" is required" },
            { """{"Name":"x","Certificate":"not base64 at all!"}""", "neither PEM" },
            { """{"Name":"x","Certificate":"AAECAwQF"}""", "base64 but not a certificate" },
            { """{"Name":"x","Certificate":"-----BEGIN CERTIFICATE-----\nAAEC\n-----END CERTIFICATE-----"}""", "CERTIFICATE" },
            { $$"""{"Name":"x","Certificate":"{{pfx}}"}""", "is a PFX" },
            { $$"""{"Name":"x","Certificate":{{withKey}}}""", "holds a private key" },
            { $$"""{"Name":"x","Certificate":{{two}}}""", "register one certificate at a time" },
            { $$"""{"Name":"x","Certificate":"{{der}}","SecurityClearance":"God"}""", "'God': it is ClusterAdmin, Operator or ValidUser" },
            { $$"""{"Name":"x","Certificate":"{{der}}","SecurityClearance":"ClusterNode"}""", "never grants" },
            { $$$"""{"Name":"x","Certificate":"{{{der}}}","Permissions":{"shop":"Write"}}""", "database 'shop' the access 'Write'" },
            { $$$"""{"Name":"x","Certificate":"{{{der}}}","Permissions":{"sh op":"Read"}}""", "cannot exist" },
            { $$$"""{"Name":"x","Certificate":"{{{der}}}","Permissions":{"shop":"Read","SHOP":"Admin"}}""", "more than once" },
            { $$"""{"Name":"x","Certificate":"{{der}}","Permissions":["shop"]}""", "\"Permissions\" must be an object" },
        };
    }

    [Theory]
    [MemberData(nameof(BadBodies))]
    public async Task ABadPutBodyIs400NamingWhatIsWrong(string body, string expected)
    {
        using var response = await _server.Admin.PutAsync("/admin/certificates", Api.Json(body));
        Assert.Contains(expected, await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, ErrorTypes.BadRequest), StringComparison.Ordinal);
        Assert.Empty(_server.Security.Store.All);
    }

    [Fact]
    public async Task TheServersOwnExpiredOrTwoFactorCertificatesAreNotRegistered()
    {
        using (var own = await _server.Admin.PutAsync("/admin/certificates", Body(_server.ServerCertificate, "self", "Operator")))
        {
            Assert.Contains("server's own certificate", await Api.AssertErrorAsync(own, HttpStatusCode.BadRequest, ErrorTypes.BadRequest), StringComparison.Ordinal);
        }
        using var expired = TestCertificates.Client("old", notBefore: DateTimeOffset.UtcNow.AddDays(-9), notAfter: DateTimeOffset.UtcNow.AddDays(-2));
        using (var old = await _server.Admin.PutAsync("/admin/certificates", Body(expired, "old", "Operator")))
        {
            Assert.Contains("expired on", await Api.AssertErrorAsync(old, HttpStatusCode.BadRequest, ErrorTypes.BadRequest), StringComparison.Ordinal);
        }
        using var fresh = TestCertificates.Client("fresh");
        using var twoFactor = await _server.Admin.PutAsync("/admin/certificates", Api.Json($$"""{"Name":"fresh","Certificate":"{{Convert.ToBase64String(fresh.RawData)}}","Permissions":{},"TwoFactorAuthenticationKey":"JBSWY3DPEHPK3PXP"}"""));
        await Api.AssertErrorAsync(twoFactor, HttpStatusCode.NotImplemented, ErrorTypes.FeatureNotSupported);
        Assert.Empty(_server.Security.Store.All);
    }
}
