export { fileResource, getResource } from './service.ts';
