using System.Text.Json.Nodes;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Queries;

/// <summary>Runs queries against the fake server and reads back the body each one sent.</summary>
public abstract class QuerySender : IDisposable
{
    protected QuerySender(Action<DocumentStore>? configure = null)
    {
        Fake = new FakeJackdaw(TestStores.Database);
        Store = TestStores.Create(Fake, configure);
        Session = Store.OpenAsyncSession();
    }

    protected FakeJackdaw Fake { get; }

    protected DocumentStore Store { get; }

    protected IAsyncDocumentSession Session { get; }

    public void Dispose()
    {
        Session.Dispose();
        Store.Dispose();
        GC.SuppressFinalize(this);
    }

    /// <summary>The body of the last query sent.</summary>
    protected JsonObject LastQuery => Fake.RequestsTo("/queries").Last().BodyJson.AsObject();

    /// <summary>Runs <paramref name="query"/> with ToListAsync and checks the RQL and the parameters (as compact JSON) it sent.</summary>
    protected async Task AssertSentAsync<T>(IQueryable<T> query, string rql, string parameters = "{}")
    {
        await query.ToListAsync();
        AssertLastQuery(rql, parameters);
    }

    protected void AssertLastQuery(string rql, string parameters = "{}")
    {
        var body = LastQuery;
        Assert.Equal(rql, (string?)body["Query"]);
        Assert.Equal(parameters, body["QueryParameters"]!.ToJsonString());
    }
}
