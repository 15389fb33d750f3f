// Texture and surface objects: fetches of every dimensionality, layered and
// cubemap textures, gathers, LOD and gradient fetches, surface loads/stores.
__global__ void textures(cudaTextureObject_t t1, cudaTextureObject_t t2, cudaTextureObject_t t3,
                         cudaTextureObject_t tl, cudaTextureObject_t tc, cudaTextureObject_t tlin,
                         float4* out, int* iout) {
    float x = threadIdx.x + 0.5f, y = blockIdx.x + 0.5f;
    float4 a = tex1D<float4>(t1, x);
    float4 b = tex2D<float4>(t2, x, y);
    float c = tex3D<float>(t3, x, y, 0.5f);
    float d = tex2DLayered<float>(tl, x, y, 1);
    float e = texCubemap<float>(tc, x, y, 1.0f);
    float f = tex2DLod<float>(t2, x, y, 1.5f);
    float g = tex2DGrad<float>(t2, x, y, make_float2(1, 0), make_float2(0, 1));
    float4 h = tex2Dgather<float4>(t2, x, y, 1);
    int i = tex1Dfetch<int>(tlin, threadIdx.x);
    int4 j = tex1Dfetch<int4>(tlin, threadIdx.x + 1);
    uchar4 k = tex2D<uchar4>(t2, x, y);
    out[threadIdx.x] = make_float4(a.x + b.y + c, d + e, f + g, h.w + k.x);
    iout[threadIdx.x] = i + j.w;
}

__global__ void surfaces(cudaSurfaceObject_t s1, cudaSurfaceObject_t s2, cudaSurfaceObject_t s3,
                         cudaSurfaceObject_t sl) {
    int x = threadIdx.x, y = blockIdx.x;
    float v = surf2Dread<float>(s2, x * 4, y);
    uchar4 c = surf2Dread<uchar4>(s2, x * 4, y, cudaBoundaryModeClamp);
    surf2Dwrite(v * 2.0f + c.x, s2, x * 4, y);
    surf1Dwrite(make_int2(x, y), s1, x * 8, cudaBoundaryModeZero);
    int z = surf3Dread<int>(s3, x * 4, y, 1);
    surf3Dwrite(z + 1, s3, x * 4, y, 2);
    float4 w = surf2DLayeredread<float4>(sl, x * 16, y, 3);
    surf2DLayeredwrite(w, sl, x * 16, y, 0);
}
