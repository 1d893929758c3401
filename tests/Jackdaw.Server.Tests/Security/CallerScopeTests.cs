using System.Net;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Security;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Security;

/// <summary>
/// What the caller's certificate decides beyond its route's access, as in RavenDB: the databases it
/// is shown, the topology of a database it cannot use, and each item of a <c>multi_get</c>.
/// </summary>
public sealed class CallerScopeTests : IAsyncLifetime
{
    private SecuredServer _server = null!;
    private System.Security.Cryptography.X509Certificates.X509Certificate2 _readerCertificate = null!;
    private HttpClient _reader = null!;

    public async Task InitializeAsync()
    {
        _server = await SecuredServer.StartAsync();
        foreach (var name in new[] { "shop", "payroll" })
        {
            using var created = await _server.Admin.PutAsync($"/admin/databases?name={name}", null);
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        _readerCertificate = TestCertificates.Client("reader");
        _server.Register(_readerCertificate, SecurityClearance.ValidUser, ("shop", DatabaseAccess.Read));
        _reader = _server.Client(_readerCertificate);
    }

    public async Task DisposeAsync()
    {
        await _server.DisposeAsync();
        _readerCertificate.Dispose();
    }

    [Fact]
    public async Task TheDatabaseListShowsAValidUserOnlyTheDatabasesItHasAccessTo()
    {
        using var mine = await _reader.GetAsync("/databases?namesOnly=true");
        Assert.Equal(HttpStatusCode.OK, mine.StatusCode);
        Assert.Equal(new[] { "shop" }, (await Api.JsonAsync(mine)).GetProperty("Databases").EnumerateArray().Select(d => d.GetString()!).ToArray());

        using var all = await _server.Admin.GetAsync("/databases?namesOnly=true");
        Assert.Equal(new[] { "payroll", "shop" }, (await Api.JsonAsync(all)).GetProperty("Databases").EnumerateArray().Select(d => d.GetString()!).Order().ToArray());
    }

    [Fact]
    public async Task TheTopologyOfADatabaseWithoutAccessIs403()
    {
        using var allowed = await _reader.GetAsync("/topology?name=shop");
        Assert.Equal(HttpStatusCode.OK, allowed.StatusCode);
        using var refused = await _reader.GetAsync("/topology?name=payroll");
        var message = await Api.AssertErrorAsync(refused, HttpStatusCode.Forbidden, ErrorTypes.Authorization);
        Assert.Contains("no access to database 'payroll'", message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task EachMultiGetItemIsAuthorizedAsTheCallerOfTheBatch()
    {
        using var response = await _reader.PostAsync("/databases/shop/multi_get", Api.Json("""
            {"Requests":[
              {"Url":"/databases/shop/docs","Query":"?id=missing","Method":"GET"},
              {"Url":"/databases/shop/docs","Query":"?id=users/1","Method":"PUT","Content":{"Name":"Ann"}}]}
            """));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var results = (await Api.JsonAsync(response)).GetProperty("Results").EnumerateArray().ToList();
        Assert.Equal(404, results[0].GetProperty("StatusCode").GetInt32());
        Assert.Equal(403, results[1].GetProperty("StatusCode").GetInt32());
        Assert.Contains("has Read access to database 'shop'", results[1].GetProperty("Result").GetProperty("Message").GetString(), StringComparison.Ordinal);
    }
}
