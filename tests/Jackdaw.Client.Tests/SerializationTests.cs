using System.Text.Json.Nodes;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests;

/// <summary>Entities survive store → wire → load unchanged, and load without spurious changes.</summary>
public sealed class SerializationTests : IDisposable
{
    private readonly FakeJackdaw _fake = new(TestStores.Database);
    private readonly DocumentStore _store;

    public SerializationTests() => _store = TestStores.Create(_fake);

    public void Dispose() => _store.Dispose();

    public static Order SampleOrder() => new()
    {
        Id = "orders/1",
        Customer = "Ann \"the\" Customer ✓",
        Status = Status.Shipped,
        OrderedAt = new DateTime(2026, 11, 23, 10, 0, 1, 123, DateTimeKind.Utc).AddTicks(4567),
        ShippedAt = new DateTimeOffset(2026, 11, 24, 8, 30, 0, TimeSpan.FromHours(2)),
        Total = 12345678901234.5678m,
        Weight = 0.1 + 0.2,
        Priority = null,
        Reference = Guid.Parse("0f8fad5b-d9cb-469f-a165-70867728950e"),
        Lines =
        [
            new() { Product = "products/1", Quantity = 2, Price = 0.10m },
            new() { Product = "products/2", Quantity = 1, Price = 79228162514264337593543950335m },
        ],
        Attributes = new() { ["gift"] = "yes", ["note"] = "line1\nline2" },
        Shipping = new ShippingInfo("UPS", Status.Pending, new DateOnly(2026, 12, 1)),
    };

    [Fact]
    public async Task NestedClassesRecordsEnumsDatesDecimalsAndNullablesRoundTrip()
    {
        var original = SampleOrder();
        await StoreAsync(original);

        using var session = _store.OpenAsyncSession();
        var loaded = await session.LoadAsync<Order>("orders/1");

        Assert.NotNull(loaded);
        Assert.Equal(original.Customer, loaded.Customer);
        Assert.Equal(original.Status, loaded.Status);
        Assert.Equal(original.OrderedAt, loaded.OrderedAt);
        Assert.Equal(DateTimeKind.Utc, loaded.OrderedAt.Kind);
        Assert.Equal(original.ShippedAt, loaded.ShippedAt);
        Assert.Equal(original.ShippedAt!.Value.Offset, loaded.ShippedAt!.Value.Offset);
        Assert.Equal(original.Total, loaded.Total);
        Assert.Equal(original.Weight, loaded.Weight);
        Assert.Null(loaded.Priority);
        Assert.Equal(original.Reference, loaded.Reference);
        Assert.Equal(original.Lines.Select(l => (l.Product, l.Quantity, l.Price)), loaded.Lines.Select(l => (l.Product, l.Quantity, l.Price)));
        Assert.Equal(original.Attributes, loaded.Attributes);
        Assert.Equal(original.Shipping, loaded.Shipping);
        Assert.False(session.Advanced.HasChanges);
    }

    [Fact]
    public async Task EnumsAreStoredAsStringsAndDatesAsIso8601()
    {
        await StoreAsync(SampleOrder());

        var stored = _fake.Stored(TestStores.Database, "orders/1")!;
        Assert.Equal("Shipped", (string?)stored["Status"]);
        Assert.Equal("2026-11-23T10:00:01.1234567Z", (string?)stored["OrderedAt"]);
        Assert.Equal("2026-11-24T08:30:00+02:00", (string?)stored["ShippedAt"]);
        Assert.Equal("12345678901234.5678", stored["Total"]!.ToJsonString());
    }

    [Fact]
    public async Task APositionalRecordRoundTripsWithItsIdFromMetadata()
    {
        await StoreAsync(new Product("products/1", "Widget", 9.99m, Status.Cancelled));

        using var session = _store.OpenAsyncSession();
        var loaded = await session.LoadAsync<Product>("products/1");

        Assert.Equal(new Product("products/1", "Widget", 9.99m, Status.Cancelled), loaded);
        Assert.False(_fake.Stored(TestStores.Database, "products/1")!.ContainsKey("Id"));
    }

    [Fact]
    public async Task NullableValuesWithValuesRoundTrip()
    {
        var order = SampleOrder();
        order.Priority = 3;
        order.ShippedAt = null;
        order.Shipping = new ShippingInfo("DHL", Status.Shipped, null);
        await StoreAsync(order);

        using var session = _store.OpenAsyncSession();
        var loaded = await session.LoadAsync<Order>("orders/1");

        Assert.Equal(3, loaded!.Priority);
        Assert.Null(loaded.ShippedAt);
        Assert.Null(loaded.Shipping!.Expected);
    }

    [Fact]
    public async Task IdsWithNonAsciiAndReservedCharactersAreEscapedInUrlsAndBodies()
    {
        const string Id = "users/ünï cödé?&=#/1";
        await StoreAsync(new User { Id = Id, Name = "x" });

        using var session = _store.OpenAsyncSession();
        var loaded = await session.LoadAsync<User>(Id);

        Assert.Equal(Id, loaded!.Id);
        Assert.Contains("id=users%2F%C3%BCn%C3%AF%20c%C3%B6d%C3%A9%3F%26%3D%23%2F1", _fake.Requests.Last().PathAndQuery);
    }

    [Fact]
    public async Task ADocumentWrittenByAnotherClientWithExtraFieldsLoadsAndIsNotReportedChanged()
    {
        _fake.Put(TestStores.Database, "users/1", new JsonObject { ["Name"] = "Ann", ["Unknown"] = 1, ["Age"] = 3 });
        using var session = _store.OpenAsyncSession();

        var user = await session.LoadAsync<User>("users/1");

        Assert.Equal(3, user!.Age);
        Assert.False(session.Advanced.HasChanges);
    }

    private async Task StoreAsync(object entity)
    {
        using var session = _store.OpenAsyncSession();
        await session.StoreAsync(entity);
        await session.SaveChangesAsync();
    }
}
