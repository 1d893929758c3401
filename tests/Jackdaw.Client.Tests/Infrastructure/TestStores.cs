namespace Jackdaw.Client.Tests.Infrastructure;

public static class TestStores
{
    public const string Database = "db";

    /// <summary>
    /// An initialized store whose requests go to <paramref name="fake"/>. It asks for no topology
    /// (the fake has none to give), so the fake sees only the requests a test makes.
    /// </summary>
    public static DocumentStore Create(FakeJackdaw fake, Action<DocumentStore>? configure = null)
    {
        var store = new DocumentStore { Urls = ["http://jackdaw.test"], Database = Database, HttpMessageHandlerFactory = () => fake };
        store.Conventions.DisableTopologyUpdates = true;
        configure?.Invoke(store);
        return store.Initialize();
    }
}
