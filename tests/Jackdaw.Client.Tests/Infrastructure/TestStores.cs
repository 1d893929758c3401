namespace Jackdaw.Client.Tests.Infrastructure;

public static class TestStores
{
    public const string Database = "db";

    /// <summary>An initialized store whose requests go to <paramref name="fake"/>.</summary>
    public static DocumentStore Create(FakeJackdaw fake, Action<DocumentStore>? configure = null)
    {
        var store = new DocumentStore { Urls = ["http://jackdaw.test"], Database = Database, HttpMessageHandlerFactory = () => fake };
        configure?.Invoke(store);
        return store.Initialize();
    }
}
