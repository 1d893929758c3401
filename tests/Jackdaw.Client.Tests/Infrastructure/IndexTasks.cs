namespace Jackdaw.Client.Tests.Infrastructure;

// The index tasks of this assembly: IndexCreation.CreateIndexesAsync(assembly) creates all of them,
// so each must compile on the real server.

public sealed class Orders_Totals : AbstractJavaScriptIndexCreationTask
{
    public Orders_Totals()
    {
        Maps = ["map('CorpusOrders', o => ({ Company: o.Company, Freight: o.Freight, City: o.ShipTo.City }))"];
        Fields = new() { ["Company"] = new IndexFieldOptions { Indexing = FieldIndexing.Exact, Storage = FieldStorage.Yes } };
    }
}

public sealed class Users_ByNameAndAge : AbstractJavaScriptIndexCreationTask
{
    public Users_ByNameAndAge()
    {
        Maps = ["map('Users', u => ({ Name: u.Name, Age: u.Age }))"];
    }
}

public sealed class UsersSearch : AbstractJavaScriptIndexCreationTask
{
    public UsersSearch()
    {
        Maps = ["map('Users', u => ({ Name: u.Name }))"];
        Fields = new() { ["Name"] = new IndexFieldOptions { Indexing = FieldIndexing.Search } };
    }

    public override string IndexName => "Users/Search";
}
